"""What the profiler, the partitioner and the runtime share about a module and its tensors: the
bytes and tensors a value holds, the median time of a call (on the device's own clock), and the
module's torch.fx graph cut into one part per module group (the cut the profiler measures and the
runtime runs).
"""

import statistics
import time

import torch
from torch import fx
from torch.fx.passes.split_module import split_module


def tensor_bytes(value):
    if torch.is_tensor(value):
        return value.numel() * value.element_size()
    if isinstance(value, (list, tuple)):
        return sum(tensor_bytes(v) for v in value)
    if isinstance(value, dict):
        return sum(tensor_bytes(v) for v in value.values())
    return 0


def tensors_of(value):
    if torch.is_tensor(value):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in tensors_of(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_of(v)]
    return []


class Clock:
    """Time stamps on the timeline of the device that does the work. On the CPU, the host's clock.
    On a GPU kernels run after their launch returns, so the host's clock would time the launches:
    stamps are CUDA events recorded on the current stream, read once the device has caught up
    (:meth:`settle`)."""

    def __init__(self, device=None):
        self.cuda = device is not None and torch.device(device).type == "cuda"

    def now(self):
        if not self.cuda:
            return time.perf_counter()
        event = torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def settle(self):
        """Waits for the device's queued work: call before reading stamps with :meth:`seconds`."""
        if self.cuda:
            torch.cuda.synchronize()

    def seconds(self, start, end):
        return start.elapsed_time(end) / 1000.0 if self.cuda else end - start


def device_of(module_or_tensors):
    """The device a module's parameters or the first of some tensors live on (the CPU if none)."""
    if isinstance(module_or_tensors, torch.nn.Module):
        first = next(module_or_tensors.parameters(), None)
    else:
        found = tensors_of(module_or_tensors)
        first = found[0] if found else None
    return first.device if first is not None else torch.device("cpu")


def median_time(function, warmup, repeats, device=None):
    """Median seconds of `repeats` calls of `function` after `warmup`, on `device`'s timeline."""
    clock = Clock(device)
    for _ in range(warmup):
        function()
    times = []
    for _ in range(repeats):
        clock.settle()
        start = clock.now()
        function()
        end = clock.now()
        clock.settle()
        times.append(clock.seconds(start, end))
    return statistics.median(times)


def _group_of(target, depth):
    parts = str(target).split(".")
    return ".".join(parts[:depth])


def _groups(graph, depth):
    """A group name per node: modules and attributes by their path cut at `depth`; functions and
    methods join the group of their latest grouped input (or, fed only by graph inputs, of their
    first grouped user)."""
    group = {}
    order = list(graph.nodes)
    for node in order:
        if node.op in ("call_module", "get_attr"):
            group[node] = _group_of(node.target, depth)
        elif node.op in ("call_function", "call_method"):
            inputs = [a for a in node.all_input_nodes if a in group]
            if inputs:
                group[node] = group[max(inputs, key=order.index)]
    for node in reversed(order):
        if node.op in ("call_function", "call_method") and node not in group:
            users = [u for u in node.users if u in group]
            group[node] = group[users[0]] if users else "input"
    return group


def trace(module, depth):
    """The module's GraphModule, with modules at `depth` kept whole; None when fx cannot trace."""

    class Tracer(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return qualname.count(".") + 1 >= depth or super().is_leaf_module(m, qualname)

    try:
        graph = Tracer().trace(module)
    except Exception as error:  # fx raises many kinds: each means "not traceable"
        return None, f"{type(error).__name__}: {error}"
    return fx.GraphModule(module, graph), None


def split_by_group(gm, module, depth):
    """The traced module cut into one part per group (``split_module``, parts numbered by the
    group's first node) and the group names by part number: the cut the profiler measures and
    the runtime runs."""
    group = _groups(gm.graph, depth)
    ids = {}
    for node in gm.graph.nodes:
        if node in group:
            ids.setdefault(group[node], len(ids))
    return split_module(gm, module, lambda node: ids[group[node]]), ids


def node_values(graph_module, *inputs):
    """Every node's value on one forward pass of `graph_module` (gradients as the caller's
    grad mode says)."""
    values = {}

    class Values(fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            values[n] = out
            return out

    Values(graph_module).run(*inputs)
    return values
