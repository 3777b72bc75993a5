"""The model cut into the plan's stages: the module's torch.fx graph grouped as the profiler
grouped it, the parts of each stage, the values that cross between stages; the synthetic batches
and the loss every rank and the reference run share."""

import torch
import torch.nn.functional as F

from .graphs import node_values, split_by_group, trace
from .ranks import RunError
from . import tensor_parallel


class Partition:
    """The module's graph grouped as the profiler grouped it, split into one part per group
    (``split_module``); the parts of each stage, the values that cross between stages, their
    shapes for one micro-batch, and which parts recompute."""

    def __init__(self, module, plan, layout, granularity, example):
        gm, failure = trace(module, granularity)
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
