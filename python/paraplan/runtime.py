"""Runs a paraplan pipeline plan on torch.distributed: the traced model split into the plan's
stages, every stage replica on the ranks the plan names, micro-batches through point-to-point
sends in a GPipe or 1F1B order, the data-parallel gradient all-reduce inside each stage's replica
group, recomputation where the plan chose it, Megatron-style tensor parallelism for the package
GPT's blocks, the optimizer step; it measures what it ran (iteration, per-stage busy and idle
time, bubble, memory) and writes the timeline as a Chrome trace in the simulator's format.

A plan made from a profile (``python3 -m paraplan profile``) names layers that are the groups of
the profiled module's torch.fx graph at a granularity; the runtime groups the module the same way
and refuses a plan whose layers are not those groups. The order of every replica's passes and
which replica runs each micro-batch are the core's schedule (``paraplan._paraplan.schedule``: the
pass list the simulator replays), not re-derived here.

The runtime is split by concern: ``ranks`` (which rank runs what, process groups), ``partition``
(the model cut into stages, the batches), ``p2p`` (transfers between stages), ``buckets``
(gradient buffers and their all-reduce), ``executor`` (one rank running the schedule),
``checkpoints``, ``launcher`` (processes or torchrun, the loop, failures). This module gathers
what callers use.
"""

from .executor import Stage, optimizer_of, reference
from .launcher import launch, worker
from .partition import Partition, loss_of, make_batch
from .ranks import Layout, RunError, make_groups

__all__ = ["Layout", "Partition", "RunError", "Stage", "launch", "loss_of", "make_batch",
           "make_groups", "optimizer_of", "reference", "worker"]
