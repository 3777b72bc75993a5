"""Ranks and process groups: which rank runs which (stage, replica, tensor-parallel index) of a
plan, and the groups they talk in."""

import torch.distributed as dist


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


def make_groups(layout):
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

