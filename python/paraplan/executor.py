"""The schedule's executor: what one rank runs — its stage's parts and parameters, and the passes
the core's schedule gives its replica (forwards and backwards of its micro-batches, the sends and
receives around them, the gradient all-reduce, the optimizer step) — and the single-process
reference run the tests compare it with."""

import time

import torch
from torch import fx
from torch.utils.checkpoint import checkpoint

from .buckets import GradientBuffer, OverlappedReduce
from .p2p import PointToPoint
from .partition import loss_of, make_batch
from .graphs import tensor_bytes
from .ranks import RunError, make_groups
from . import tensor_parallel


class Stage:
    """What one rank runs: its stage's nodes, parameters (sharded under tensor parallelism),
    optimizer, peers and groups, and the record of what it did."""

    def __init__(self, rank, layout, partition, plan, options, device, schedule):
        self.rank, self.layout, self.partition = rank, layout, partition
        self.stage, self.replica, self.tp_index = layout.at[rank]
        self.t = layout.stages[self.stage][1]
        self.device = device
        self.nodes = partition.stage_nodes(self.stage)
        self.groups = make_groups(layout)
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
        self.buffer = GradientBuffer(self.stage, self.parameters, device)
        self.gradients, self.gradient_views = self.buffer.gradients, self.buffer.gradient_views
        self.weight_pointers = {p.data_ptr() for p in self.parameters}
        self.overlap = (OverlappedReduce(self, options.get("bucket_mib", 25) * 2**20)
                        if options.get("overlap") and self.dp_group is not None else None)
        self.optimizer = optimizer_of(self.parameters, options)
        # The core's schedule (sim::replica_passes, as the simulator replays it): this replica's
        # passes in order, and which replica of every stage runs each micro-batch.
        passes = schedule["stages"][self.stage]["passes"]
        self.order = [(kind, j) for kind, j in passes[self.replica]]
        runs = [{j: r for r, mine in enumerate(stage["passes"]) for _, j in mine}
                for stage in schedule["stages"]]
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
        self.p2p = PointToPoint(layout, partition, self.groups, runs, device, self.record)
        self.saved_bytes = 0
        self.peak_saved_bytes = 0
        self.loss_bytes = 0  # the loss's log-softmax and two gradients, at its backward

    def record(self, name, category, stream, start, microbatch=-1):
        # On a GPU the host returns once the kernels are queued: the pass ends when the device
        # is done (without this a pass on an H100 measured its launches, 10 % of its time, and
        # the rest showed up as idle time at the next synchronisation).
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        self.events.append((name, category, stream, start, time.perf_counter(), microbatch))

    def forward(self, microbatch, inputs, pending, stash):
        env = {}
        for value, producer in self.incoming:
            tensor = self.p2p.receive(value, producer, microbatch, False)
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
                    tensor_bytes(tensor)
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
        if self.stage == self.partition.last:  # the output waits for its loss (the profile's
            output = env[self.partition.output]  # _add_the_loss)
            saved[0] += tensor_bytes(output)
            self.loss_bytes = 3 * output.numel() * 4
        self.saved_bytes += saved[0]
        self.peak_saved_bytes = max(self.peak_saved_bytes, self.saved_bytes)
        if self.tp_index == 0:  # every tensor-parallel rank holds the same outputs
            for value, consumers in self.outgoing.items():
                for consumer in consumers:
                    self.p2p.send(env[value].detach(), value, consumer, microbatch, False, pending)
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
                g = self.p2p.receive(value, self.stage, microbatch, True, consumer)
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
                    self.p2p.send(g, value, producer, microbatch, True, pending)
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
            self.buffer.all_reduce(self.dp_group)
            self.record("all-reduce", "gradient sync", 2, start)
        start = time.perf_counter()
        self.optimizer.step()
        self.record("optimizer", "optimizer", 0, start)
        return sum(losses)

    def fixed_bytes(self):
        state = sum(tensor_bytes(v) for s in self.optimizer.state.values() for v in s.values())
        params = sum(tensor_bytes(p) for p in self.parameters)
        return 2 * params + state + self.loss_bytes  # weights, gradients, optimizer state


def optimizer_of(parameters, options):
    if not parameters:
        return torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.0)
    if options["optimizer"] == "sgd":
        return torch.optim.SGD(parameters, lr=options["lr"])
    return torch.optim.Adam(parameters, lr=options["lr"])



def reference(module, options):
    """Plain single-process training of `module` on the same batches, micro-batches and
    optimizer as a run with `options`: (losses, final state by name)."""
    torch.set_num_threads(options["threads"])
    module.train()
    example, _ = make_batch(0, options["micro_shape"], options["tokens"], (1, 1),
                            options["seed"])
    with torch.no_grad():
        output_shape = tuple(module(example).shape)
    optimizer = optimizer_of(list(module.parameters()), options)
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

