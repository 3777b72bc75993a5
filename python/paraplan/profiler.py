"""A PyTorch module as a paraplan model: its graph (torch.fx), grouped by module at a chosen depth,
each group measured on this machine (forward and backward time, median of repeats after warm-up,
at a fixed thread count), with its parameter, gradient and Adam-state bytes, the activations its
backward keeps, and what recomputing it would save; edges carry the bytes that cross them.

The result is paraplan's native model document (``"format": "paraplan-model"``), which
``paraplan plan`` and :func:`paraplan.plan` read (``input=``).
"""

import statistics
import time
import warnings

import torch
from torch import fx
from torch.fx.passes.shape_prop import ShapeProp

from ._paraplan import Error
from .device import device_name, matmul_flops_per_s
from .graphs import Clock, device_of, median_time, node_values, split_by_group, tensor_bytes, tensors_of, trace


class ProfileError(Error, ValueError):
    """The module or its inputs cannot be profiled; the message says why and what would do. A
    :class:`paraplan.Error`, as every error paraplan raises."""


def _optimizer_seconds(parameters, warmup, repeats):
    """Median seconds of an Adam step over copies of `parameters` (with gradients): the
    optimizer's share of an iteration for them, on this machine."""
    if not parameters:
        return 0.0
    copies = [p.detach().clone().requires_grad_() for p in parameters]
    generator = torch.Generator().manual_seed(0)
    for c in copies:
        c.grad = (torch.randn(c.shape, generator=generator, dtype=c.dtype) * 1e-3).to(c.device)
    optimizer = torch.optim.Adam(copies, lr=1e-3)
    return median_time(optimizer.step, max(1, warmup), max(1, repeats), copies[0].device)


def _measure(sub, args, warmup, repeats):
    """Forward and backward seconds of one part run alone on its recorded inputs, and the bytes
    of the activations its backward keeps (saved tensors that are not its parameters)."""
    params = {p.data_ptr() for p in sub.parameters()}

    def fresh():  # inputs with gradients, not leaves (a part may start with an in-place op)
        return [a.detach().clone().requires_grad_().clone()
                if torch.is_tensor(a) and a.is_floating_point() else a for a in args]

    inputs = fresh()
    where = device_of(args)
    clock = Clock(where)
    forward_s = median_time(lambda: sub(*inputs), warmup, repeats, where)
    saved = {}

    def pack(tensor):
        if tensor.data_ptr() not in params:
            saved[(tensor.data_ptr(), tensor.storage_offset(), tensor.numel())] = tensor_bytes(tensor)
        return tensor

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        out = sub(*fresh())
    differentiable = [t for t in tensors_of(out) if t.requires_grad]

    def backward():
        outputs = [t for t in tensors_of(sub(*fresh())) if t.requires_grad]
        grads = [torch.ones_like(t) for t in outputs]
        for p in sub.parameters():
            p.grad = None
        clock.settle()
        start = clock.now()
        if outputs:
            torch.autograd.backward(outputs, grads)
        end = clock.now()
        clock.settle()
        return clock.seconds(start, end)

    for _ in range(warmup):
        backward()
    backward_s = statistics.median(backward() for _ in range(repeats)) if differentiable else 0.0
    return forward_s, backward_s, sum(saved.values())


def profile(module, example_inputs, *, granularity=2, warmup=2, repeats=5, threads=1,
            microbatches=1, name=None, min_seconds=5.0, tokens=0):
    """Profiles `module` on `example_inputs` (a tensor or a tuple of them) and returns paraplan's
    native model document (a dict). Each layer is a group of the module's nodes: the modules at
    depth `granularity` of its hierarchy (1: its children). Times are medians of `repeats` runs
    after `warmup`, at `threads` intra-op threads, and at least `min_seconds` of timed passes
    (more repeats for fast models: a VM's speed swings by a quarter from one second to the
    next, so a median needs minutes' worth of samples, not a second's). When torch.fx cannot
    trace the module, the groups come from module-level hooks instead, in the order the modules
    ran, and a warning says so. The document records what it was measured on and with
    (``profiled_on``: the device, its matmul rate alone at `threads`, the input's shape and, for
    token inputs, the vocabulary `tokens`)."""
    return profile_and_check(module, example_inputs, granularity=granularity, warmup=warmup,
                             repeats=repeats, threads=threads, microbatches=microbatches,
                             name=name, check=False, min_seconds=min_seconds, tokens=tokens)[0]


def profile_and_check(module, example_inputs, *, granularity=2, warmup=2, repeats=5, threads=1,
                      microbatches=1, name=None, check=True, min_seconds=5.0, tokens=0):
    """:func:`profile`, and with `check` the median seconds of a whole forward and backward pass
    of the unsplit module (loss: the sum of its outputs) timed between the profile's own passes,
    so both medians see the same machine (a VM's speed drifts by tens of percent over a minute);
    what the layers' times should add up to. Returns (document, seconds or None)."""
    if not isinstance(module, torch.nn.Module):
        raise ProfileError(f"expected a torch.nn.Module, got {type(module).__name__}")
    if granularity < 1:
        raise ProfileError(f"granularity {granularity}: expected at least 1")
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        module.train()
        try:
            with torch.no_grad():
                outputs = tensors_of(module(*inputs))
        except Exception as error:
            raise ProfileError(f"the module does not run on the example inputs "
                               f"({', '.join(str(tuple(t.shape)) for t in tensors_of(inputs))}): "
                               f"{type(error).__name__}: {error}") from None
        gm, failure = trace(module, granularity)
        if gm is None:
            warnings.warn(f"torch.fx cannot trace {type(module).__name__} ({failure}); "
                          f"profiling its modules at depth {granularity} with hooks instead")
            parts, edges = _hooked_parts(module, inputs, granularity)
            measured = [_measure(p["module"], p["args"], warmup, repeats) for p in parts]
            step_s = measure_step(module, inputs, warmup=warmup, repeats=repeats,
                                  threads=threads) if check else None
        else:
            parts, edges, split = _traced_parts(gm, module, inputs, granularity)
            *times, step_s = _in_graph_times(split, inputs, parts, warmup, max(1, repeats),
                                             module if check else None, min_seconds)
            measured = list(zip(*times))

        layers = []
        for i, part in enumerate(parts):
            forward_s, backward_s, saved = measured[i]
            param_bytes = sum(tensor_bytes(p) for p in part["module"].parameters())
            # A few steps suffice: an optimizer step is memory-bound and steady, and one step
            # over a large layer (VGG's classifier: 120 M parameters) takes seconds here.
            params = list(part["module"].parameters())
            large = sum(p.numel() for p in params) > 4_000_000
            optimizer_s = _optimizer_seconds(params, min(warmup, 1), 1 if large else
                                             min(repeats, 3))
            # Weights, their gradients and Adam's two moments (each the parameter's size).
            fixed = 4 * param_bytes
            vanilla = {"id": "vanilla", "compute_time_s": forward_s + backward_s,
                       "forward_time_s": forward_s, "parameter_bytes": param_bytes,
                       "memory_per_inflight_bytes": saved, "memory_fixed_bytes": fixed}
            if optimizer_s > 0:
                vanilla["optimizer_time_s"] = optimizer_s
            # Recomputation keeps only the part's inputs and runs its forward twice.
            kept = sum(tensor_bytes(a) for a in part["args"])
            options = [vanilla]
            if kept < saved:
                options.append(dict(vanilla, id="recompute",
                                    compute_time_s=2 * forward_s + backward_s,
                                    memory_per_inflight_bytes=kept))
            layers.append({"id": i, "name": part["name"], "output_bytes": part["output_bytes"],
                           "options": {"1": options}})
        if layers and outputs:
            _add_the_loss(layers[-1], outputs[0])
        tensors = tensors_of(inputs)
        batch = tensors[0].shape[0] if tensors else 1
        document = {"format": "paraplan-model", "version": 1,
                    "name": name or type(module).__name__, "microbatches": microbatches,
                    "profile_batch_size": int(batch), "layers": layers,
                    "edges": [{"from": a, "to": b, "bytes": n}
                              for (a, b), n in sorted(edges.items())]}
        if tensors:
            where = tensors[0].device
            document["profiled_on"] = {
                "device": device_name(where), "threads": threads,
                "flops_per_s": matmul_flops_per_s(threads, repeats=max(3, repeats), device=where,
                                                  min_seconds=min(1.0, min_seconds)),
                "input_shape": [int(d) for d in tensors[0].shape], "tokens": int(tokens)}
        return document, step_s
    finally:
        torch.set_num_threads(previous_threads)


def _add_the_loss(layer, output):
    """The memory of the loss the runtime trains with (partition.loss_of: cross-entropy over the
    last dimension, in fp32, computed when the backward starts) on the layer that produces the
    output: per micro-batch in flight, the output itself, held until its loss is taken; once,
    the log-softmax and the two gradients of its size that the loss's backward holds at the same
    time. On an H100 run of a 32,000-token GPT these were the 4.6 GiB between the profile's
    10.6 GiB and the 15.2 GiB the allocator saw."""
    if output.dim() < 1 or not output.is_floating_point():
        return
    for option in layer["options"]["1"]:
        option["memory_per_inflight_bytes"] += tensor_bytes(output)
        option["memory_fixed_bytes"] += 3 * output.numel() * 4


def measure_step(module, example_inputs, *, warmup=2, repeats=5, threads=1):
    """Median seconds of one forward and backward pass of the whole module (the loss: the sum of
    its outputs), at `threads` intra-op threads: what the layers' times of a profile should add
    up to."""
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    previous_threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        module.train()
        return median_time(lambda: _whole_step(module, inputs), warmup, repeats,
                           device_of(inputs))
    finally:
        torch.set_num_threads(previous_threads)


def _whole_step(module, inputs):
    for p in module.parameters():
        p.grad = None
    outputs = [t for t in tensors_of(module(*inputs)) if t.requires_grad]
    torch.autograd.backward([t.float().sum() for t in outputs])


def _traced_parts(gm, module, inputs, depth):
    ShapeProp(gm).propagate(*inputs)
    split, ids = split_by_group(gm, module, depth)
    # Every node's value on one forward pass: the parts' inputs and outputs, the edges' tensors.
    with torch.no_grad():
        values = node_values(split, *inputs)
    names = {i: g for g, i in ids.items()}
    parts, index, producer = [], {}, {}
    for node in split.graph.nodes:
        if node.op == "call_module" and str(node.target).startswith("submod_"):
            args, out = fx.node.map_arg(node.args, lambda n: values[n]), values[node]
            index[node] = len(parts)
            number = int(str(node.target).split("_")[1])
            parts.append({"name": names[number], "module": getattr(split, node.target),
                          "args": args, "output_bytes": tensor_bytes(out), "number": number})
            producer[node] = node
        elif node.op == "call_function" and node.all_input_nodes and \
                node.all_input_nodes[0] in producer:  # getitem of a part's outputs
            producer[node] = producer[node.all_input_nodes[0]]
    edges = {}
    for node in split.graph.nodes:
        if node not in index:
            continue
        for source in node.all_input_nodes:
            if source in producer and producer[source] is not node:
                key = (index[producer[source]], index[node])
                edges[key] = edges.get(key, 0) + tensor_bytes(values[source])
    return parts, edges, split


def _in_graph_times(split, inputs, parts, warmup, repeats, whole=None, min_seconds=0.0):
    """Every part's forward and backward seconds and saved-activation bytes measured inside
    whole training passes of the split module (so each part runs with the caches, allocator and
    autograd engine of a real pass): forward between the part's call and return, backward from
    the moment the first gradient of its outputs is ready to the moment the last gradient of its
    inputs is (the end of the whole backward for parts fed only by the graph's inputs). With
    `whole` (the unsplit module), also the median seconds of its whole passes, one after each of
    ours. At least `repeats` passes and `min_seconds` of them (at most 200)."""
    count = len(parts)
    index = {part["number"]: i for i, part in enumerate(parts)}  # split_module's numbering
    forward = [[] for _ in range(count)]
    backward = [[] for _ in range(count)]
    saved = [0] * count
    params = {p.data_ptr() for p in split.parameters()}
    clock = Clock(device_of(inputs))

    def one_pass(record):
        starts, ends = {}, {}  # every stamp of a part's backward; the earliest and latest count
        stamps = []  # (part, forward start, forward end)
        current = [None]
        packed = {}

        def pack(tensor):
            if current[0] is not None and tensor.data_ptr() not in params:
                packed[(current[0], tensor.data_ptr(), tensor.storage_offset(),
                        tensor.numel())] = tensor_bytes(tensor)
            return tensor

        def stamp(table, part):
            def hook(grad):
                table.setdefault(part, []).append(clock.now())
                return grad
            return hook

        class Timed(fx.Interpreter):
            def call_module(self, target, args, kwargs):
                if not str(target).startswith("submod_"):
                    return super().call_module(target, args, kwargs)
                part = index[int(str(target).split("_")[1])]
                current[0] = part
                start = clock.now()
                out = super().call_module(target, args, kwargs)
                stamps.append((part, start, clock.now()))
                current[0] = None
                for t in tensors_of(out):
                    if t.requires_grad:
                        t.register_hook(stamp(starts, part))
                for t in tensors_of(args):
                    if t.requires_grad:
                        t.register_hook(stamp(ends, part))
                return out

        for p in split.parameters():
            p.grad = None
        clock.settle()
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            out = Timed(split).run(*inputs)
        outputs = [t.float().sum() for t in tensors_of(out) if t.requires_grad]
        origin = clock.now()
        torch.autograd.backward(outputs)
        finished = clock.now()
        clock.settle()
        if record:
            for part, start, end in stamps:
                forward[part].append(clock.seconds(start, end))
            at = lambda stamp: clock.seconds(origin, stamp)  # noqa: E731
            for part in range(count):
                if part in starts:
                    last = max(at(s) for s in ends[part]) if part in ends else at(finished)
                    backward[part].append(last - min(at(s) for s in starts[part]))
                else:
                    backward[part].append(0.0)
            saved[:] = [0] * count
            for (part, *_), n in packed.items():
                saved[part] += n

    steps = []
    for _ in range(warmup):
        one_pass(False)
        if whole is not None:
            _whole_step(whole, inputs)
    begin, done = time.perf_counter(), 0
    while done < repeats or (time.perf_counter() - begin < min_seconds and done < 200):
        done += 1
        one_pass(True)
        if whole is not None:
            clock.settle()
            start = clock.now()
            _whole_step(whole, inputs)
            end = clock.now()
            clock.settle()
            steps.append(clock.seconds(start, end))
    return ([statistics.median(f) for f in forward], [statistics.median(b) for b in backward],
            list(saved), statistics.median(steps) if steps else None)


def _hooked_parts(module, inputs, depth):
    """Modules at `depth` (or leaves above it) in the order they ran, as a chain."""
    chosen = [(n, m) for n, m in module.named_modules()
              if n and (n.count(".") + 1 == depth or
                        (n.count(".") + 1 < depth and not list(m.children())))]
    runs, hooks = [], []
    for n, m in chosen:
        def record(mod, args, out, n=n):
            runs.append((n, mod, args, out))
        hooks.append(m.register_forward_hook(record))
    try:
        with torch.no_grad():
            module(*inputs)
    finally:
        for h in hooks:
            h.remove()
    if not runs:
        raise ProfileError(f"{type(module).__name__} has no submodules at depth {depth} to "
                           f"profile; try a smaller granularity")
    parts, edges = [], {}
    for i, (n, mod, args, out) in enumerate(runs):
        parts.append({"name": n, "module": mod, "args": tuple(args), "output_bytes": tensor_bytes(out)})
        if i:
            edges[(i - 1, i)] = tensor_bytes(args)
    return parts, edges


def pipedream_text(document):
    """The profile as PipeDream's torch-graph text (the format DAPPLE's planner and
    ``paraplan plan`` read): one line per layer, ``node<i> -- <name> -- forward_compute_time=<ms>,
    backward_compute_time=<ms>, activation_size=<bytes>, parameter_size=<bytes>``, then one
    indented ``node<a> -- node<b>`` line per edge. Times are milliseconds for the whole profile
    batch; PipeDream has no options, so only each layer's plain one (no recomputation) is
    written."""
    lines = []
    for layer in document["layers"]:
        plain = layer["options"]["1"][0]
        forward_ms = 1000 * plain["forward_time_s"]
        backward_ms = 1000 * plain["compute_time_s"] - forward_ms
        name = str(layer["name"]).replace(" -- ", " - ") or f"layer{layer['id']}"
        lines.append(f"node{layer['id'] + 1} -- {name} -- "
                     f"forward_compute_time={forward_ms:.6f}, "
                     f"backward_compute_time={backward_ms:.6f}, "
                     f"activation_size={float(layer['output_bytes']):.1f}, "
                     f"parameter_size={float(plain['parameter_bytes']):.1f}")
    for edge in document["edges"]:
        lines.append(f"\tnode{edge['from'] + 1} -- node{edge['to'] + 1}")
    return "\n".join(lines) + "\n"
