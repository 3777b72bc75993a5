"""Checkpoints: each stage's whole parameters (tensor-parallel shards gathered) and optimizer
state, written by replica 0, read back by any run of the same plan."""

import os

import torch
import torch.distributed as dist

from .ranks import RunError
from . import tensor_parallel


def names_of(module):
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


def save(stage, names, directory, step, signature):
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
