"""Ranks and process groups: which rank runs which (stage, replica, tensor-parallel index) of a
plan, and the groups they talk in."""

import torch.distributed as dist

from ._paraplan import Error


class RunError(Error, ValueError):
    """A plan that does not match the model, the device count or the launch (refused before
    training), or a run that failed; the message says which and what would do."""


# --------------------------------------------------------------------------------------------
# The plan's layout: which rank runs which (stage, replica, tensor-parallel index)


class Layout:
    """Ranks of the plan: stage s, replica r, tensor-parallel index k of each rank, as the core
    lays them out (``ranks`` of the schedule :func:`paraplan.schedule_of` returns: stage by stage
    unless the plan names the devices of a stage; a plan placed on some devices of a larger
    cluster names cluster devices, and rank i runs what the i-th smallest of them runs —
    ``device_of_rank`` keeps the cluster device of each rank). Nothing here recomputes it."""

    def __init__(self, schedule):
        ranks = schedule.get("ranks") or []
        if not ranks:
            raise RunError("the schedule names no ranks (take it from paraplan.schedule_of(PLAN))")
        self.of = {(int(r["stage"]), int(r["replica"]), int(r["tensor_index"])): rank
                   for rank, r in enumerate(ranks)}
        self.world = len(ranks)
        self.device_of_rank = [int(r["device"]) for r in ranks]
        widths = {}
        for (s, r, k) in self.of:
            d, t = widths.get(s, (0, 0))
            widths[s] = (max(d, r + 1), max(t, k + 1))
        self.stages = [widths[s] for s in range(len(widths))]
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

