"""Runs a paraplan pipeline plan on torch.distributed: the traced model split into the plan's
stages, every stage replica on the ranks the plan names, micro-batches through point-to-point
sends in a GPipe or 1F1B order, the data-parallel gradient all-reduce inside each stage's replica
group, recomputation where the plan chose it, Megatron-style tensor parallelism for the package
GPT's blocks, the optimizer step; it measures what it ran (iteration, per-stage busy and idle
time, bubble, memory) and writes the timeline as a Chrome trace in the simulator's format.

A plan made from a profile (``python3 -m paraplan profile``) names layers that are the groups of
the profiled module's torch.fx graph at a granularity; the runtime groups the module the same way
and refuses a plan whose layers are not those groups. Micro-batch ``j`` runs on replica
``j mod d`` of each stage (d: the stage's data-parallel width), as the planner prices it.
"""

import datetime
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import fx
from torch.utils.checkpoint import checkpoint

from .profiler import _bytes, _trace, node_values, split_by_group
from . import tensor_parallel


class RunError(ValueError):
    """A plan that does not match the model, the device count or the launch (refused before
    training), or a run that failed; the message says which and what would do."""


# --------------------------------------------------------------------------------------------
# The plan's layout: which rank runs which (stage, replica, tensor-parallel index)


class Layout:
    """Ranks of the plan: stage s, replica r, tensor-parallel index k, in rank order (stage by
    stage) unless the plan names the devices of a stage (``device_ids``). A plan placed on some
    devices of a larger cluster names cluster devices; rank i then runs what the i-th smallest
    of them runs (``device_of_rank`` keeps the cluster device of each rank)."""

    def __init__(self, plan):
        stages = plan.get("stages") or []
        if not stages:
            raise RunError("the plan has no stages (write one with paraplan plan ... -o PLAN)")
        self.stages = []
        self.of = {}
        count = 0
        for s, stage in enumerate(stages):
            d, t = int(stage.get("data_parallel", 1)), int(stage.get("tensor_parallel", 1))
            if d < 1 or t < 1:
                raise RunError(f"stages[{s}]: data_parallel and tensor_parallel must be >= 1")
            self.stages.append((d, t))
            named = stage.get("device_ids") or []
            if named and len(named) != d * t:
                raise RunError(f"stages[{s}].device_ids: {len(named)} devices for "
                               f"{d} x {t} (data x tensor parallel)")
            for i, (r, k) in enumerate((r, k) for r in range(d) for k in range(t)):
                self.of[(s, r, k)] = int(named[i]) if named else count + i
            count += d * t
        self.world = count
        named = sorted(self.of.values())
        if len(set(named)) != count or named[0] < 0:
            raise RunError("the plan's device_ids name a device twice (or a negative one)")
        self.device_of_rank = named
        rank_of = {device: rank for rank, device in enumerate(named)}
        self.of = {key: rank_of[device] for key, device in self.of.items()}
        self.at = {rank: key for key, rank in self.of.items()}

    def replica(self, stage, microbatch):
        return microbatch % self.stages[stage][0]


# --------------------------------------------------------------------------------------------
# The model cut into the plan's stages


class Partition:
    """The module's graph grouped as the profiler grouped it, split into one part per group
    (``split_module``); the parts of each stage, the values that cross between stages, their
    shapes for one micro-batch, and which parts recompute."""

    def __init__(self, module, plan, layout, granularity, example):
        gm, failure = _trace(module, granularity)
        if gm is None:
            raise RunError(f"torch.fx cannot trace {type(module).__name__} ({failure}); the "
                           f"runtime needs its graph to cut it into stages")
        split, ids = split_by_group(gm, module, granularity)
        # The plan's layers are the profile's: groups by name (ids are the profile's order).
        layer_name = {layer["id"]: layer.get("name", "")
                      for layer in (plan.get("model_config") or {}).get("layers") or []}
        if sorted(layer_name.values()) != sorted(ids):
            raise RunError(f"the plan's model has layers {_short(layer_name.values())} but the "
                           f"module, grouped at granularity {granularity}, has "
                           f"{_short(list(ids))}: plan a profile of this module "
                           f"(python3 -m paraplan profile ... --granularity {granularity})")
        stage_of = {}
        for s, stage in enumerate(plan["stages"]):
            chosen = stage.get("options") or []
            for position, layer in enumerate(stage.get("layers", [])):
                group_id = ids.get(layer_name.get(layer))
                if group_id is None or group_id in stage_of:
                    raise RunError(f"stages[{s}].layers: layer {layer} is not a layer of the "
                                   f"model or is in two stages")
                stage_of[group_id] = (s, chosen[position] if position < len(chosen) else None)
        if len(stage_of) != len(ids):
            missing = sorted(name for name, i in ids.items() if i not in stage_of)
            raise RunError(f"the plan's stages leave layers {_short(missing)} out")
        names = list(ids)  # by partition number
        self.stage_count = len(plan["stages"])
        self.module_names = {id(m): n for n, m in module.named_modules()}
        self.split = split
        self.group_names = names
        self.nodes = list(self.split.graph.nodes)
        self.owner = {}
        self.recompute = set()
        for node in self.nodes:
            if node.op == "call_module":
                part = int(str(node.target).split("_")[1])
                self.owner[node] = stage_of[part][0]
                if stage_of[part][1] == "recompute":
                    self.recompute.add(node)
            elif node.op == "call_function":
                self.owner[node] = self.owner[node.args[0]]
        inputs = [n for n in self.nodes if n.op == "placeholder"]
        if len(inputs) != 1:
            raise RunError(f"the module takes {len(inputs)} inputs; the runtime feeds one")
        self.input = inputs[0]
        output = self.nodes[-1]
        produced = [n for n in output.all_input_nodes if n in self.owner]
        if len(produced) != 1:
            raise RunError("the module must return one tensor (the logits the loss reads)")
        self.output = produced[0]
        self.last = self.owner[self.output]
        # Values crossing stages: (value node, producing stage, consuming stage).
        self.crossings = []
        for node in self.nodes:
            if node not in self.owner:
                continue
            for source in node.all_input_nodes:
                if source in self.owner and self.owner[source] != self.owner[node]:
                    key = (source, self.owner[source], self.owner[node])
                    if key not in self.crossings:
                        self.crossings.append(key)
        for source, producer, consumer in self.crossings:
            if producer > consumer:
                raise RunError(f"layer {source.name} of stage {producer} feeds stage {consumer}: "
                               f"stages must follow the graph's order")
        if self.owner[self.output] != self.stage_count - 1:
            raise RunError("the model's output must come from the last stage")
        for s, (_, t) in enumerate(layout.stages):
            for node in (self.stage_nodes(s) if t > 1 else []):
                if node.op == "call_module":
                    try:
                        tensor_parallel.check_part(getattr(self.split, node.target), t,
                                                   names[int(str(node.target).split("_")[1])])
                    except ValueError as error:
                        raise RunError(f"stages[{s}]: {error}") from None
        self._describe(example)

    def _describe(self, example):
        """Shape, dtype and whether a gradient flows back, per crossing value, for one
        micro-batch (one pass with gradients on every rank, before training)."""
        values = node_values(self.split, example)
        self.meta = {}
        for source, _, _ in self.crossings:
            value = values[source]
            if not torch.is_tensor(value):
                raise RunError(f"value {source.name} crosses stages but is a "
                               f"{type(value).__name__}, not a tensor: cut elsewhere")
            self.meta[source] = (tuple(value.shape), value.dtype, value.requires_grad)
        self.output_shape = tuple(values[self.output].shape)

    def stage_nodes(self, stage):
        return [n for n in self.nodes if self.owner.get(n) == stage]


def _short(items, limit=8):
    items = [str(i) for i in items]
    return "[" + ", ".join(items[:limit]) + (", ..." if len(items) > limit else "") + "]"


# --------------------------------------------------------------------------------------------
# Data, loss and the schedule


def make_batch(step, shape, tokens, output_shape, seed):
    """The synthetic batch of `step` (the same on every rank and in the reference run): inputs
    (token ids below `tokens`, or normal floats) and class targets for every output position."""
    generator = torch.Generator().manual_seed(seed * 1000003 + step)
    if tokens:
        inputs = torch.randint(0, tokens, shape, generator=generator)
    else:
        inputs = torch.randn(shape, generator=generator)
    classes = output_shape[-1]
    targets = torch.randint(0, classes, (shape[0],) + tuple(output_shape[1:-1]),
                            generator=generator)
    return inputs, targets


def loss_of(output, targets):
    return F.cross_entropy(output.reshape(-1, output.shape[-1]).float(), targets.reshape(-1))


def schedule_order(microbatches, inflight, kind):
    """The passes of one replica: ("F" | "B", micro-batch) in order. GPipe: every forward, then
    every backward. 1F1B: forwards while fewer than `inflight` are in flight, else a backward."""
    if kind == "gpipe":
        return [("F", j) for j in microbatches] + [("B", j) for j in microbatches]
    order, forward, backward = [], 0, 0
    while backward < len(microbatches):
        if forward < len(microbatches) and forward - backward < max(1, inflight):
            order.append(("F", microbatches[forward]))
            forward += 1
        else:
            order.append(("B", microbatches[backward]))
            backward += 1
    return order


# --------------------------------------------------------------------------------------------
# One rank


class Stage:
    """What one rank runs: its stage's nodes, parameters (sharded under tensor parallelism),
    optimizer, peers and groups, and the record of what it did."""

    def __init__(self, rank, layout, partition, plan, options, device):
        self.rank, self.layout, self.partition = rank, layout, partition
        self.stage, self.replica, self.tp_index = layout.at[rank]
        self.t = layout.stages[self.stage][1]
        self.device = device
        self.nodes = partition.stage_nodes(self.stage)
        self.groups = _make_groups(layout)
        self.tp_group = self.groups["tp"].get((self.stage, self.replica))
        self.dp_group = self.groups["dp"].get((self.stage, self.tp_index))
        self.modules = {}
        for node in self.nodes:
            if node.op == "call_module":
                part = getattr(partition.split, node.target)
                if self.t > 1:
                    try:
                        part = tensor_parallel.shard_part(part, self.tp_index, self.t,
                                                          self.tp_group, partition.group_names,
                                                          node.target, partition.module_names)
                    except ValueError as error:
                        raise RunError(f"stages[{self.stage}]: {error}") from None
                self.modules[node] = part.to(device)
        self.parameters = []
        seen = set()
        for part in self.modules.values():
            for p in part.parameters():
                if id(p) not in seen:
                    seen.add(id(p))
                    self.parameters.append(p)
        # One gradient buffer for the stage, allocated once, for the data-parallel all-reduce:
        # gradients are copied in, reduced in place, copied back (fresh 100 MB buffers every
        # iteration cost more in page faults than the all-reduce itself; letting autograd
        # accumulate into views of it made the backward twice as slow here).
        if len({p.dtype for p in self.parameters}) > 1:
            raise RunError(f"stage {self.stage} mixes parameter dtypes "
                           f"({sorted({str(p.dtype) for p in self.parameters})}); the runtime "
                           f"keeps one gradient buffer per stage")
        self.gradients = torch.zeros(sum(p.numel() for p in self.parameters),
                                     dtype=self.parameters[0].dtype if self.parameters
                                     else torch.float32, device=device)
        self.gradient_views, offset = [], 0
        for p in self.parameters:
            self.gradient_views.append(self.gradients[offset:offset + p.numel()].view_as(p))
            offset += p.numel()
        self.weight_pointers = {p.data_ptr() for p in self.parameters}
        self.overlap = (_OverlappedReduce(self, options.get("bucket_mib", 25) * 2**20)
                        if options.get("overlap") and self.dp_group is not None else None)
        self.optimizer = _optimizer(self.parameters, options)
        inflight = int(plan["stages"][self.stage].get("inflight_microbatches") or 1)
        mine = [j for j in range(options["microbatches"]) if layout.replica(self.stage, j) ==
                self.replica]
        self.order = schedule_order(mine, inflight, options["schedule"])
        # Sorted by the value's place in the graph (then by stage) on both ends, so every pair of
        # ranks issues its messages in the same order (NCCL matches them by order, not by tag).
        position = {n: i for i, n in enumerate(partition.nodes)}
        crossings = sorted(partition.crossings, key=lambda c: (position[c[0]], c[1], c[2]))
        self.incoming = [(v, p) for v, p, c in crossings if c == self.stage]
        self.outgoing = {}
        for v, p, c in crossings:
            if p == self.stage:
                self.outgoing.setdefault(v, []).append(c)
        self.events = []
        self.saved_bytes = 0
        self.peak_saved_bytes = 0

    # Peers: micro-batch j of stage s runs on replica j mod d_s; tensor-parallel index 0 sends.
    def peers(self, stage, microbatch):
        r = self.layout.replica(stage, microbatch)
        return [self.layout.of[(stage, r, k)] for k in range(self.layout.stages[stage][1])]

    def tag(self, value, microbatch, backward):
        index = self.partition.nodes.index(value)
        return ((microbatch * len(self.partition.nodes) + index) * 2 + int(backward)) % (1 << 30)

    def record(self, name, category, stream, start, microbatch=-1):
        self.events.append((name, category, stream, start, time.perf_counter(), microbatch))

    def receive(self, value, producer, microbatch, backward, consumer=None):
        shape, dtype, _ = self.partition.meta[value]
        source_stage = consumer if backward else producer
        source = self.peers(source_stage, microbatch)[0]
        buffer = torch.empty(shape, dtype=dtype, device=self.device)
        start = time.perf_counter()
        dist.recv(buffer, source, tag=self.tag(value, microbatch, backward),
                  group=self.groups["backward" if backward else "forward"])
        self.record(f"recv {'gradient' if backward else 'activation'} mb {microbatch}",
                    "receive", 1, start, microbatch)
        return buffer

    def send(self, tensor, value, stage, microbatch, backward, pending):
        start = time.perf_counter()
        tensor = tensor.contiguous()
        for peer in self.peers(stage, microbatch):  # the tensor is kept until the send is done
            pending.append((dist.isend(tensor, peer, tag=self.tag(value, microbatch, backward),
                                       group=self.groups["backward" if backward else "forward"]),
                            tensor))
        self.record(f"send {'gradient' if backward else 'activation'} mb {microbatch}", "send",
                    1, start, microbatch)

    def forward(self, microbatch, inputs, pending, stash):
        env = {}
        for value, producer in self.incoming:
            tensor = self.receive(value, producer, microbatch, False)
            if self.partition.meta[value][2]:
                tensor.requires_grad_()
            env[value] = tensor
        env[self.partition.input] = inputs
        start = time.perf_counter()
        packed = {}
        weights = self.weight_pointers

        def pack(tensor):  # what autograd keeps for the backward, weights and repeats excluded
            if tensor.data_ptr() not in weights:
                packed[(tensor.data_ptr(), tensor.storage_offset(), tensor.numel())] = \
                    _bytes(tensor)
            return tensor

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            for node in self.nodes:
                args = fx.node.map_arg(node.args, lambda n: env[n])
                if node.op == "call_module":
                    part = self.modules[node]
                    if node in self.partition.recompute:
                        env[node] = checkpoint(part, *args, use_reentrant=False)
                    else:
                        env[node] = part(*args)
                else:
                    env[node] = node.target(*args)
        self.record(f"F mb {microbatch}", "forward", 0, start, microbatch)
        saved = [sum(packed.values())]
        self.saved_bytes += saved[0]
        self.peak_saved_bytes = max(self.peak_saved_bytes, self.saved_bytes)
        if self.tp_index == 0:  # every tensor-parallel rank holds the same outputs
            for value, consumers in self.outgoing.items():
                for consumer in consumers:
                    self.send(env[value].detach(), value, consumer, microbatch, False, pending)
        stash[microbatch] = (env, saved[0])

    def backward(self, microbatch, targets, pending, stash, count):
        """The backward of one micro-batch (the loss divided by the `count` micro-batches on the
        last stage; elsewhere the gradients its consumers send); returns its loss share."""
        env, saved = stash.pop(microbatch)
        tensors, grads = [], []
        loss = None
        if self.stage == self.partition.last:
            loss = loss_of(env[self.partition.output], targets) / count
            tensors.append(loss)
            grads.append(None)
        for value, consumers in self.outgoing.items():
            if not self.partition.meta[value][2]:
                continue
            total = None
            for consumer in consumers:
                g = self.receive(value, self.stage, microbatch, True, consumer)
                total = g if total is None else total + g
            tensors.append(env[value])
            grads.append(total)
        start = time.perf_counter()
        if tensors:
            torch.autograd.backward(tensors, grads)
        self.record(f"B mb {microbatch}", "backward", 0, start, microbatch)
        self.saved_bytes -= saved
        for value, producer in self.incoming:
            if self.partition.meta[value][2]:
                g = env[value].grad
                if g is None:
                    g = torch.zeros_like(env[value])
                if self.tp_index == 0:
                    self.send(g, value, producer, microbatch, True, pending)
        return loss.item() if loss is not None else 0.0

    def step(self, number, options):
        """One iteration: this rank's passes, the gradient all-reduce, the optimizer step.
        Returns the sum over this rank's micro-batches of their mean loss (last stage)."""
        inputs, targets = make_batch(number, options["batch_shape"], options["tokens"],
                                     (options["batch_shape"][0],) +
                                     self.partition.output_shape[1:], options["seed"])
        size = options["micro_batch"]
        pending, stash, losses = [], {}, []
        for p in self.parameters:
            p.grad = None  # the first micro-batch's gradient is taken as is, not added to zeros
        overlap = self.overlap if self.dp_group is not None else None
        for position, (kind, j) in enumerate(self.order):
            chunk = slice(j * size, (j + 1) * size)
            if kind == "F":
                self.forward(j, inputs[chunk].to(self.device), pending, stash)
            else:
                if overlap is not None and position == len(self.order) - 1:
                    overlap.arm()  # the last backward: reduce buckets as they are final
                losses.append(self.backward(j, targets[chunk].to(self.device), pending, stash,
                                            options["microbatches"]))
        start = time.perf_counter()
        for work, _ in pending:
            work.wait()
        self.record("wait for sends", "send", 1, start)
        if overlap is not None:
            start = time.perf_counter()
            overlap.finish()
            self.record(f"all-reduce (what the backward did not hide; {overlap.left} of "
                        f"{len(overlap.buckets)} buckets started after it)", "gradient sync", 2,
                        start)
        elif self.dp_group is not None:
            start = time.perf_counter()
            self._all_reduce_gradients()
            self.record("all-reduce", "gradient sync", 2, start)
        start = time.perf_counter()
        self.optimizer.step()
        self.record("optimizer", "optimizer", 0, start)
        return sum(losses)

    def _all_reduce_gradients(self):
        for p, view in zip(self.parameters, self.gradient_views):
            if p.grad is None:
                view.zero_()
            else:
                view.copy_(p.grad)
        dist.all_reduce(self.gradients, group=self.dp_group)
        for p, view in zip(self.parameters, self.gradient_views):
            if p.grad is None:
                p.grad = view.clone()
            else:
                p.grad.copy_(view)

    def fixed_bytes(self):
        state = sum(_bytes(v) for s in self.optimizer.state.values() for v in s.values())
        params = sum(_bytes(p) for p in self.parameters)
        return 2 * params + state  # weights, gradients, optimizer state


class _OverlappedReduce:
    """The stage's gradient all-reduce overlapped with its last backward pass, as DDP does it:
    the gradient buffer cut into buckets (`bucket_mib`, default 25 MiB) in reverse parameter
    order (the backward
    reaches the last layers first), each bucket all-reduced asynchronously once every gradient in
    it is final, the buckets launched strictly in order so every replica issues the same
    collectives in the same order."""

    def __init__(self, stage, bucket_bytes):
        self.stage = stage
        self.buckets, current, size = [], [], 0
        for index in reversed(range(len(stage.parameters))):
            current.append(index)
            size += _bytes(stage.parameters[index])
            if size >= bucket_bytes:
                self.buckets.append(current)
                current, size = [], 0
        if current:
            self.buckets.append(current)
        self.bucket_of = {i: b for b, members in enumerate(self.buckets) for i in members}
        self.hooks, self.works = [], []

    def _slice(self, bucket):
        members = self.buckets[bucket]  # consecutive indices, descending
        views = self.stage.gradient_views
        start = views[members[-1]].data_ptr() - self.stage.gradients.data_ptr()
        end = views[members[0]].data_ptr() - self.stage.gradients.data_ptr() + \
            views[members[0]].numel() * views[members[0]].element_size()
        size = self.stage.gradients.element_size()
        return self.stage.gradients[start // size:end // size]

    def arm(self):
        self.missing = [len(members) for members in self.buckets]
        self.done = [False] * len(self.stage.parameters)
        self.next, self.works = 0, []
        for index, p in enumerate(self.stage.parameters):
            self.hooks.append(p.register_hook(self._hook(index)))

    def _hook(self, index):
        def hook(grad):  # the whole gradient of this backward, before it is accumulated
            p, view = self.stage.parameters[index], self.stage.gradient_views[index]
            view.copy_(grad)
            if p.grad is not None:
                view.add_(p.grad)
            self.done[index] = True
            self.missing[self.bucket_of[index]] -= 1
            self._launch(False)
            return grad
        return hook

    def _launch(self, everything):
        while self.next < len(self.buckets) and (everything or self.missing[self.next] == 0):
            self.works.append(dist.all_reduce(self._slice(self.next),
                                              group=self.stage.dp_group, async_op=True))
            self.next += 1

    def finish(self):
        for handle in self.hooks:
            handle.remove()
        self.hooks = []
        for index, p in enumerate(self.stage.parameters):  # no gradient in the last backward
            if not self.done[index]:
                view = self.stage.gradient_views[index]
                view.copy_(p.grad) if p.grad is not None else view.zero_()
        self.left = len(self.buckets) - self.next  # buckets the backward did not start
        self._launch(True)
        for work in self.works:
            work.wait()
        for p, view in zip(self.stage.parameters, self.stage.gradient_views):
            if p.grad is None:
                p.grad = view.clone()
            else:
                p.grad.copy_(view)


def _make_groups(layout):
    """Every tensor-parallel group (per stage replica) and data-parallel group (per stage and
    tensor-parallel index) of more than one rank, created in the same order on every rank, and
    one group of all ranks per direction for the point-to-point traffic: under NCCL a pair of
    ranks shares one stream per group, and in 1F1B's steady state a stage sends an activation
    forward while its successor sends a gradient back; on one stream each send would wait behind
    the other's receive (Megatron pairs them in one NCCL group call; separate communicators per
    direction do the same here)."""
    everyone = list(range(layout.world))
    groups = {"tp": {}, "dp": {}, "forward": dist.new_group(everyone),
              "backward": dist.new_group(everyone)}
    for s, (d, t) in enumerate(layout.stages):
        if t > 1:
            for r in range(d):
                groups["tp"][(s, r)] = dist.new_group([layout.of[(s, r, k)] for k in range(t)])
        if d > 1:
            for k in range(t):
                groups["dp"][(s, k)] = dist.new_group([layout.of[(s, r, k)] for r in range(d)])
    return groups


def _optimizer(parameters, options):
    if not parameters:
        return torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.0)
    if options["optimizer"] == "sgd":
        return torch.optim.SGD(parameters, lr=options["lr"])
    return torch.optim.Adam(parameters, lr=options["lr"])


# --------------------------------------------------------------------------------------------
# A run: every rank's loop, checkpoints, what was measured


def _names(module):
    """Original names of the module's parameters and buffers, by tensor identity."""
    names = {id(t): n for n, t in module.named_parameters()}
    names.update({id(t): n for n, t in module.named_buffers()})
    return names


def stage_state(stage, names):
    """The stage's parameters and buffers, whole (tensor-parallel shards gathered), by their
    names in the original module."""
    state = {}
    for part in stage.modules.values():
        for m in part.modules():
            if isinstance(m, tensor_parallel.ParallelBlock):
                state.update(m.full_parameters())
        for t in list(part.parameters()) + list(part.buffers()):
            if id(t) in names:
                state[names[id(t)]] = t.detach().cpu().clone()
    return state


def _save(stage, names, directory, step, signature):
    state = stage_state(stage, names)  # every tensor-parallel rank joins the gather
    folder = os.path.join(directory, f"step-{step}")
    if stage.replica == 0:
        os.makedirs(folder, exist_ok=True)
        torch.save({"step": step, "plan": signature, "state": state,
                    "optimizer": stage.optimizer.state_dict()},
                   os.path.join(folder, f"stage{stage.stage}-tp{stage.tp_index}.pt"))
    dist.barrier()
    if stage.rank == 0:
        with open(os.path.join(directory, "latest"), "w", encoding="utf-8") as out:
            out.write(f"{step}\n")


def latest_checkpoint(directory):
    """(step, folder) of the newest checkpoint in `directory`, or (0, None)."""
    try:
        with open(os.path.join(directory, "latest"), encoding="utf-8") as f:
            step = int(f.read().strip())
    except (OSError, ValueError):
        return 0, None
    return step, os.path.join(directory, f"step-{step}")


def load_checkpoint(folder, signature):
    """Every stage file of a checkpoint folder: (whole-model state, {(stage, tp): optimizer})."""
    state, optimizers = {}, {}
    for entry in sorted(os.listdir(folder)):
        if not entry.endswith(".pt"):
            continue
        saved = torch.load(os.path.join(folder, entry))
        if saved.get("plan") != signature:
            raise RunError(f"{folder}/{entry}: written by a run of another plan (its stages "
                           f"differ); resume with the plan that wrote it")
        state.update(saved["state"])
        s, k = entry[len("stage"):-len(".pt")].split("-tp")
        optimizers[(int(s), int(k))] = saved["optimizer"]
    return state, optimizers


def plan_signature(plan):
    return [[list(s.get("layers", [])), list(s.get("options") or []), s.get("data_parallel", 1),
             s.get("tensor_parallel", 1)] for s in plan["stages"]]


def worker(rank, world, config):
    """One rank's whole run; returns rank 0's summary (others: None)."""
    from .__main__ import load_module  # the CLI's module loader (factory and arguments)

    plan, options = config["plan"], config["options"]
    cuda = torch.cuda.is_available() and config.get("cuda", True)
    device = torch.device(f"cuda:{int(os.environ.get('LOCAL_RANK', rank))}" if cuda else "cpu")
    if cuda:
        torch.cuda.set_device(device)
    torch.set_num_threads(options["threads"])
    dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=options["timeout"]))
    try:
        torch.manual_seed(options["seed"])
        module = load_module(config["module"], config["args"])
        module.train()
        signature = plan_signature(plan)
        start_step, optimizers = 0, {}
        if options.get("resume"):
            start_step, folder = latest_checkpoint(options["checkpoint"])
            if folder:
                state, optimizers = load_checkpoint(folder, signature)
                module.load_state_dict(state)
        names = _names(module)
        layout = Layout(plan)
        if rank == 0 and options.get("verbose") and \
                layout.device_of_rank != list(range(layout.world)):
            print("placed on part of a cluster: rank i runs on cluster device " +
                  ", ".join(f"{i} -> {d}" for i, d in enumerate(layout.device_of_rank)), flush=True)
        example, _ = make_batch(0, options["micro_shape"], options["tokens"], (1, 1),
                                options["seed"])
        partition = Partition(module, plan, layout, options["granularity"], example)
        stage = Stage(rank, layout, partition, plan, options, device)
        if (stage.stage, stage.tp_index) in optimizers:
            stage.optimizer.load_state_dict(optimizers[(stage.stage, stage.tp_index)])
        summary = _loop(stage, start_step, options, names, signature)
    finally:
        dist.destroy_process_group()
    return summary


def _loop(stage, start_step, options, names, signature):
    losses, step_times, busy, peaks = [], [], [], []
    last_events, origin = [], 0.0
    is_loss_rank = stage.stage == stage.partition.last and stage.tp_index == 0
    for number in range(start_step, options["steps"]):
        if options.get("die") == (stage.rank, number):
            os._exit(17)  # fault injection (tests): this rank dies without a word
        dist.barrier()
        stage.events = []
        origin = time.perf_counter()
        loss = stage.step(number, options)
        total = torch.tensor([loss if is_loss_rank else 0.0], dtype=torch.float64,
                             device=stage.device)  # NCCL reduces device tensors only
        dist.all_reduce(total)
        step_times.append(time.perf_counter() - origin)
        losses.append(total.item())
        busy.append(sum(end - start for _, category, _, start, end, _ in stage.events
                        if category in ("forward", "backward", "optimizer")))
        peaks.append(torch.cuda.max_memory_allocated(stage.device)
                     if stage.device.type == "cuda"
                     else stage.fixed_bytes() + stage.peak_saved_bytes)
        last_events = [(n, c, s, a - origin, b - origin, j) for n, c, s, a, b, j in stage.events]
        if stage.rank == 0 and options.get("verbose"):
            print(f"step {number}: loss {losses[-1]:.6f}, {step_times[-1]:.4f} s", flush=True)
        if options.get("checkpoint") and options.get("save_every") and \
                (number + 1) % options["save_every"] == 0:
            _save(stage, names, options["checkpoint"], number + 1, signature)
    timed = slice(1, None) if len(step_times) > 1 else slice(None)  # the first step warms up
    mine = {"rank": stage.rank, "stage": stage.stage, "replica": stage.replica,
            "tensor_parallel_index": stage.tp_index,
            "busy_s": statistics.median(busy[timed]) if busy else 0.0,
            "peak_bytes": max(peaks) if peaks else 0,
            "forward_s": _median_of(stage.events, "forward"),
            "backward_s": _median_of(stage.events, "backward"),
            "events": last_events}
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, mine)
    if stage.rank != 0:
        return None
    iteration = statistics.median(step_times[timed]) if step_times else 0.0
    return {"losses": losses, "first_step": start_step, "step_times_s": step_times,
            "iteration_time_s": iteration, "ranks": gathered}


def _median_of(events, category):
    times = [end - start for _, c, _, start, end, _ in events if c == category]
    return statistics.median(times) if times else 0.0


def reference(module, options):
    """Plain single-process training of `module` on the same batches, micro-batches and
    optimizer as a run with `options`: (losses, final state by name)."""
    torch.set_num_threads(options["threads"])
    module.train()
    example, _ = make_batch(0, options["micro_shape"], options["tokens"], (1, 1),
                            options["seed"])
    with torch.no_grad():
        output_shape = tuple(module(example).shape)
    optimizer = _optimizer(list(module.parameters()), options)
    size, count = options["micro_batch"], options["microbatches"]
    losses = []
    for number in range(options["steps"]):
        inputs, targets = make_batch(number, options["batch_shape"], options["tokens"],
                                     (options["batch_shape"][0],) + output_shape[1:],
                                     options["seed"])
        optimizer.zero_grad(set_to_none=True)
        total = 0.0
        for j in range(count):
            chunk = slice(j * size, (j + 1) * size)
            loss = loss_of(module(inputs[chunk]), targets[chunk]) / count
            loss.backward()
            total += loss.item()
        optimizer.step()
        losses.append(total)
    return losses, {n: t.detach().clone() for n, t in module.state_dict().items()}


# --------------------------------------------------------------------------------------------
# Launching


def _free_port():
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _spawned(rank, world, config, summary_file):
    try:
        summary = worker(rank, world, config)
    except RunError as error:
        print(f"paraplan run: rank {rank}: {error}", file=sys.stderr, flush=True)
        sys.exit(3)
    except RuntimeError as error:  # a peer died or timed out: gloo and NCCL raise these
        print(f"paraplan run: rank {rank}: lost the other ranks ({_first_line(error)})",
              file=sys.stderr, flush=True)
        sys.exit(4)
    if summary is not None:
        torch.save(summary, summary_file)


def _first_line(error):
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


def launch(config):
    """Runs `config` on its plan's ranks: in this process when started by torchrun (RANK and
    WORLD_SIZE set), else in as many processes started here. Returns rank 0's summary (None on
    other torchrun ranks); raises RunError when a rank fails (its code in `.code`)."""
    world = Layout(config["plan"]).world
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
        launched = int(os.environ["WORLD_SIZE"])
        if launched != world:
            raise RunError(f"torchrun started {launched} ranks but the plan needs {world} "
                           f"(its stages' data x tensor parallel widths)")
        return worker(int(os.environ["RANK"]), world, config)
    import torch.multiprocessing as mp
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ["MASTER_PORT"] = str(_free_port())
    import tempfile
    context = mp.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="paraplan-run-") as scratch:
        summary_file = os.path.join(scratch, "summary.pt")
        processes = [context.Process(target=_spawned, args=(rank, world, config, summary_file))
                     for rank in range(world)]
        for p in processes:
            p.start()
        failed = _watch(processes, config["options"]["timeout"])
        summary = torch.load(summary_file) if os.path.exists(summary_file) else None
    if failed is not None:
        rank, code = failed
        error = RunError(f"rank {rank} exited with code {code}" +
                         (" (killed)" if code < 0 else "") +
                         "; the other ranks were stopped")
        error.code = 3 if code == 3 else 4
        raise error
    return summary


def _watch(processes, timeout):
    """Waits for every process; when one fails, gives the others `timeout` seconds to notice
    (they report losing it) and then stops them. Returns (rank, exit code) of the first
    failure, or None."""
    failed = None
    while True:
        alive = [p for p in processes if p.exitcode is None]
        for rank, p in enumerate(processes):
            if failed is None and p.exitcode not in (None, 0):
                failed = (rank, p.exitcode)
                deadline = time.monotonic() + timeout
        if not alive:
            return failed
        if failed is not None and time.monotonic() > deadline:
            for p in alive:
                p.terminate()
            for p in alive:
                p.join()
            return failed
        alive[0].join(0.1)
