"""paraplan from Python: plan, price, explore and replay the parallel training of a model.

Every call takes the keywords of the matching ``paraplan`` command (``--seq-len`` is ``seq_len``)
and returns the same document its ``--json`` prints, as a dict. The C++ core does all planning
and pricing; nothing here re-implements it.

    >>> import paraplan
    >>> best = paraplan.plan(model="llama3-8b", cluster="dgx-h100", devices=16, batch=64)
    >>> best["config"]["tp"], round(best["iteration_time_s"], 3)

Bad input raises a subclass of :class:`paraplan.Error` with the CLI's message, the keyword in
place of the flag: :class:`UsageError` (a keyword's value), :class:`InputError` (a file),
:class:`InfeasibleError` (nothing fits), :class:`IoError`, :class:`LimitError`,
:class:`InternalError`.
"""

import json as _json
import os as _os

from . import _paraplan
from ._paraplan import (Error, InfeasibleError, InputError, InternalError, IoError, LimitError,
                        UsageError)

__all__ = ["plan", "evaluate", "frontier", "inspect", "knobs", "schedule_of", "simulate", "profile", "Error", "UsageError", "InputError",
           "InfeasibleError", "IoError", "LimitError", "InternalError"]


def _call(function, keywords):
    return _json.loads(function({k: v for k, v in keywords.items() if v is not None}))


def _path(value):
    return _os.fspath(value) if isinstance(value, _os.PathLike) else value


def knobs():
    """Every training knob the calls take, as the core declares it once: ``keyword``, ``flag``
    (the CLI's), ``config_key`` (in a plan file's ``config``), ``type``, ``min``/``max`` or
    ``choices``, ``default``, ``searched`` (plan searches it unless given), ``stacks`` and each
    engine's ``spellings``."""
    return _json.loads(_paraplan.knob_table())["knobs"]


def _launch(from_):
    """``from_`` as the keywords the core takes: ("megatron", "args.txt") → format and file."""
    if from_ is None:
        return {}
    if isinstance(from_, (str, _os.PathLike)) or len(from_) != 2:
        raise UsageError('from_: expected (format, file), e.g. ("megatron", "args.txt")')
    return {"from_format": from_[0], "from_file": _path(from_[1])}


def plan(model=None, input=None, from_=None, **keywords):
    """The best plan, as ``paraplan plan ... --json`` prints it.

    ``model``: a transformer (built-in name such as ``"llama3-70b"``, or a Hugging Face
    ``config.json``) for the transformer planner, or a built-in operator graph (``"alexnet"``,
    ...) for the intra-op planner. ``input``: a layer model (paraplan or Piper JSON), a
    DAPPLE/PipeDream profile (pipeline planner) or an ONNX file (intra-op planner). A layer
    model's file given first is the input: ``paraplan.plan("model.json", devices=4)``.

    Transformer keywords: ``cluster`` (preset or file; default ``"dgx-a100"``), ``devices``,
    ``batch`` (sequences), the knobs to fix (``seq_len``, ``micro_batch``, ``tp``, ``cp``,
    ``pp``, ``dp``, ``ep``, ``vpp``, ``recompute`` ("none", "selective", "full" or a number of
    layers), ``sequence_parallel``, ``zero``, ``overlap_grad_reduce``, ``attention``,
    ``moe_capacity_factor``), ``calibration``, ``uniform_stages``, ``top``, ``resimulate``,
    ``time_limit`` (seconds), ``train_tokens`` with ``days`` (and ``gpu_hour_price``): the
    fewest devices of the preset's kind whose best plan trains that many tokens ("15T" or a
    number) in time, under ``"sizing"``, ``export`` ("megatron", "nemo", "deepspeed", "torchtitan" or "bridge": the configuration under
    the key ``"export"``). On a cluster of several device types (``"mixed-a100-h100"`` or a
    file with typed machines) the answer is the mixed planner's (``"planner": "llm-mixed"``: the
    best pipeline over both types, each type alone, and the type-blind plan, whose type
    ``model_device`` names); it searches every knob but ``seq_len`` and ``attention``. Pipeline
    keywords: ``format``, ``cluster``, ``devices``, ``memory``
    (bytes, or "16GiB"), ``bandwidth`` (bytes/s, or "25GB/s"), ``microbatches``,
    ``cost_model`` ("piper" or "dapple"), ``machines``, ``batch``, ``microbatch_size``,
    ``profile_batch``, ``placement`` ("search" or "rank-order": on a cluster with a network, every
    stage replica placed on its links, or stages on consecutive devices), ``coarsen`` (super-nodes
    to coarsen the layer graph to; default: exact), ``model_device`` (the device the model's
    times were measured on; other device types in the cluster run them scaled by peak FLOP/s),
    ``objective`` ("iteration": the simulated iteration, default; "steady-state": Piper's
    bottleneck), ``dp`` (every stage's data-parallel width), ``pp`` (exactly that many stages),
    ``stage_dp`` ("2,1,1": each stage's width, first stage first).
    Intra-op keywords: ``devices``, ``batch``, ``flops`` (FLOP/s, or
    "312TFLOP/s"), ``bandwidth``, ``min_block``, ``keep_all_flows``, ``powers_of_two``,
    ``all_devices``.

    ``from_=("megatron", "args.txt")``, ``("nemo", "recipe.yaml")``, ``("deepspeed",
    "ds_config.json")``, ``("torchtitan", "job.toml")`` or ``("bridge", "launch.sh")``: the job
    as you launch it;
    the best plan with its sequence length, global batch, precision and devices, as
    :func:`evaluate` with ``from_`` gives it (``as_is``, ``best``, ``speedup``, ``diff``).
    """
    keywords = dict(keywords, **_launch(from_))
    return _call(_paraplan.plan, dict(keywords, model=_path(model), input=_path(input)))


def evaluate(model=None, from_=None, **keywords):
    """One transformer training configuration priced, as ``paraplan evaluate --json`` prints it.

    Keywords: ``cluster``, ``devices``, ``batch``, the knobs (as :func:`plan`), ``stage_layers``
    ("9,8,8,7"), ``calibration``, ``export``.

    ``from_=("megatron", "args.txt")``, ``("nemo", "recipe.yaml")``, ``("deepspeed",
    "ds_config.json")`` (with ``model`` and ``seq_len``), ``("torchtitan", "job.toml")`` or
    ``("bridge", "launch.sh")`` (a Megatron-Bridge run_recipe.py launch): the
    job as you launch it, priced as it is and against the best plan on the same devices and
    batch, as
    ``paraplan evaluate --from megatron args.txt --json`` prints it (``as_is``, ``best``,
    ``speedup``, ``diff``); ``model`` only when the arguments do not give the model's shape,
    ``devices`` only when they have no torchrun line; ``explain=True`` is accepted for symmetry.
    """
    keywords = dict(keywords, **_launch(from_))
    return _call(_paraplan.evaluate, dict(keywords, model=_path(model)))


def frontier(model, **keywords):
    """Every non-dominated transformer plan over (iteration time, peak memory per device,
    devices), as ``paraplan frontier --model ... --json`` prints it; given a layer model's file
    (``paraplan.frontier("model.json", devices=8)`` or ``input=``), the pipeline planner's
    frontier, with ``format``, ``cluster``, ``devices``, ``memory``, ``bandwidth``,
    ``microbatches``, ``memory_step`` and ``time_limit`` (seconds) as ``paraplan frontier``;
    given an operator graph (``paraplan.frontier("alexnet", devices=8)``, an ONNX file, or
    ``planner="intra-op"``), TensorOpt's frontier of per-layer shardings over (step time, memory
    per device, devices), with ``batch``, ``flops``, ``bandwidth``, ``memory``, ``memory_step``
    (0: exact), ``min_block``, ``powers_of_two`` and ``keep_all_flows``."""
    return _call(_paraplan.frontier, dict(keywords, model=_path(model)))


def inspect(model, batch=None):
    """What paraplan reads from a model (a built-in name, a Hugging Face config.json or an ONNX
    file), as ``paraplan inspect --model ... --json`` prints it: a transformer's architecture
    and parameter counts, or an operator graph's layers (``batch``: operator graphs only)."""
    return _call(_paraplan.inspect, {"model": _path(model), "batch": batch})


def schedule_of(plan, schedule=None):
    """The schedule of a pipeline plan file as the core builds it (the pass list the simulator
    replays and ``python3 -m paraplan run`` executes): ``microbatches``, ``schedule`` and per
    stage its ``replicas`` and, per replica, its ``passes`` in order, each ["F" or "B",
    micro-batch]. ``schedule``: "1f1b" (default: the plan's) or "gpipe"."""
    return _call(_paraplan.schedule, {"plan": _path(plan), "schedule": schedule})


def simulate(plan, schedule=None):
    """One iteration of a plan file written by ``paraplan plan -o`` replayed in the simulator,
    as ``paraplan simulate --json`` prints it. ``schedule``: "gpipe", "1f1b",
    "interleaved-1f1b" or "zero-bubble" (transformer plans; default: the plan's own)."""
    return _call(_paraplan.simulate, {"plan": _path(plan), "schedule": schedule})


def profile(module, example_inputs, **keywords):
    """A PyTorch module as paraplan's native model document (a dict; save it as JSON and plan it
    with ``plan(input=...)``): its torch.fx graph grouped by module at depth ``granularity``
    (default 2), each group's forward and backward seconds measured here (``warmup``,
    ``repeats``, ``threads``), its parameter, gradient and Adam bytes, the activations its
    backward keeps and a recompute option. See :mod:`paraplan.profiler`."""
    from .profiler import profile as run  # imports torch only when asked
    return run(module, example_inputs, **keywords)
