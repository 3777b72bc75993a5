"""python3 -m paraplan profile MODULE --input-shape N,C,H,W -o model.json
python3 -m paraplan probe --nproc N -o cluster.json
python3 -m paraplan run PLAN.json --model MODULE --input-shape N,... [--compare]

MODULE is ``package.module:factory`` (``torchvision.models:resnet50``, ``paraplan.models:gpt``)
or ``path/to/file.py:factory``; the factory is called with the ``--arg key=value`` pairs
(integers, floats or strings). Exit codes: 0 written, 2 a bad command line or module path, 3 a
module that cannot be profiled (it does not run on the inputs), 5 an output file that cannot be
written.
"""

import argparse
import json
import os
import sys

from .modules import load_module


def _write_json(path, document, command):
    """Writes `document` to `path`; False (and one message) when the file cannot be written."""
    return _write_text(path, json.dumps(document, indent=2) + "\n", command)


def _can_write(path, command):
    """Whether `path` can be written, checked before the work that produces it: False (and one
    message) when its folder does not exist or cannot be written, or it is a folder."""
    folder = os.path.dirname(os.path.abspath(path))
    why = ("No such directory" if not os.path.isdir(folder)
           else "Is a directory" if os.path.isdir(path)
           else "Permission denied" if not os.access(folder, os.W_OK) else None)
    if why:
        print(f"paraplan {command}: {path}: {why}", file=sys.stderr)
        return False
    return True


def _write_text(path, text, command):
    """Writes `text` to `path`; False (and one message) when the file cannot be written."""
    try:
        with open(path, "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as error:
        print(f"paraplan {command}: {path}: {error.strerror}", file=sys.stderr)
        return False
    return True


def _shape(text):
    try:
        shape = tuple(int(x) for x in text.split(","))
    except ValueError:
        shape = ()
    if not shape or min(shape) < 1:
        raise ValueError(f"--input-shape {text}: expected positive sizes separated by commas, "
                         f"e.g. 8,3,224,224")
    return shape


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m paraplan")
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("profile", help="profile a PyTorch module into a paraplan model")
    p.add_argument("module", help="package.module:factory or file.py:factory")
    p.add_argument("--arg", action="append", default=[], help="factory argument key=value")
    p.add_argument("--input-shape", required=True, help="e.g. 8,3,224,224 (the batch first)")
    p.add_argument("--tokens", type=int, default=0,
                   help="integer inputs in [0, TOKENS) (token ids) instead of random floats")
    p.add_argument("--granularity", type=int, default=2,
                   help="group the graph by module at this depth (default 2)")
    p.add_argument("--warmup", type=int, default=2, help="runs before timing (default 2)")
    p.add_argument("--repeats", type=int, default=5, help="timed runs, median (default 5)")
    p.add_argument("--min-seconds", type=float, default=5.0,
                   help="time at least this long (more repeats for fast models; default 5)")
    p.add_argument("--threads", type=int, default=1, help="intra-op threads (default 1)")
    p.add_argument("--device", default="cpu",
                   help="where to profile: cpu (default), cuda or cuda:N (a GPU profile is what "
                        "plans for a GPU cluster are priced from)")
    p.add_argument("--microbatches", type=int, default=1, help="micro-batches per batch")
    p.add_argument("--check", action="store_true",
                   help="also time a whole forward and backward pass and compare")
    p.add_argument("-o", "--output", required=True, help="the paraplan model JSON to write")
    p.add_argument("--pipedream", metavar="FILE",
                   help="also write the profile as PipeDream's torch-graph text (DAPPLE reads it)")
    q = commands.add_parser("probe", help="measure this machine's ranks into a cluster file")
    q.add_argument("--nproc", type=int, default=2, help="ranks (processes) to measure (default 2)")
    q.add_argument("--sizes", default="4096,65536,1048576,4194304,16777216,67108864",
                   help="message sizes in bytes, comma-separated")
    q.add_argument("--repeats", type=int, default=5, help="timed runs per size, median")
    q.add_argument("--threads", type=int, default=1, help="intra-op threads per rank")
    q.add_argument("-o", "--output", required=True, help="the paraplan cluster JSON to write")
    _run_arguments(commands)
    a = parser.parse_args(argv)
    if a.command == "probe":
        return probe_main(a)
    if a.command == "run":
        return run_main(a)

    if not _can_write(a.output, "profile"):  # before minutes of measuring
        return 5
    import torch  # after the command line is checked: importing torch takes a while

    from .profiler import ProfileError, pipedream_text, profile_and_check
    try:
        shape = _shape(a.input_shape)
        module = load_module(a.module, a.arg)
    except ValueError as error:
        print(f"paraplan profile: {error}", file=sys.stderr)
        return 2
    if not isinstance(module, torch.nn.Module):
        print(f"paraplan profile: {a.module} returned a {type(module).__name__}, not a "
              f"torch.nn.Module", file=sys.stderr)
        return 2
    try:
        device = torch.device(a.device)
        if device.type not in ("cpu", "cuda"):
            raise RuntimeError(f"a {device.type} device")
        if device.type == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("this machine's PyTorch sees no CUDA device")
        if device.type == "cuda" and (device.index or 0) >= torch.cuda.device_count():
            raise RuntimeError(f"there are {torch.cuda.device_count()} CUDA devices")
    except RuntimeError as error:
        print(f"paraplan profile: --device {a.device}: {str(error).splitlines()[0]} (expected "
              f"cpu, cuda or cuda:N of a visible GPU)", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    inputs = (torch.randint(0, a.tokens, shape) if a.tokens > 0 else torch.randn(shape))
    module, inputs = module.to(device), inputs.to(device)
    try:
        document, step = profile_and_check(
            module, inputs, granularity=a.granularity, warmup=a.warmup, repeats=a.repeats,
            threads=a.threads, microbatches=a.microbatches, name=a.module.rsplit(":", 1)[1],
            check=a.check, min_seconds=a.min_seconds, tokens=a.tokens)
    except ProfileError as error:
        print(f"paraplan profile: {a.module}: {error}", file=sys.stderr)
        return 3
    if not _write_json(a.output, document, "profile"):
        return 5
    if a.pipedream and not _write_text(a.pipedream, pipedream_text(document), "profile"):
        return 5
    total = sum(layer["options"]["1"][0]["compute_time_s"] for layer in document["layers"])
    print(f"{document['name']}: {len(document['layers'])} layers, {len(document['edges'])} edges, "
          f"forward + backward {total:.4f} s per batch of {shape[0]}; written to {a.output}")
    if a.check:
        print(f"check: the layers add up to {total:.4f} s, a whole forward and backward pass "
              f"measures {step:.4f} s ({100 * (total / step - 1):+.1f} %)")
    return 0


def _run_arguments(commands):
    r = commands.add_parser("run", help="train a model with a pipeline plan on torch.distributed")
    r.add_argument("plan", help="a plan file written by paraplan plan PROFILE -o PLAN")
    r.add_argument("--model", required=True, help="package.module:factory or file.py:factory")
    r.add_argument("--arg", action="append", default=[], help="factory argument key=value")
    r.add_argument("--input-shape", default=None,
                   help="one micro-batch's input, the batch first, e.g. 4,128 (default: the "
                        "shape the plan's model was profiled at; another shape is refused)")
    r.add_argument("--tokens", type=int, default=0,
                   help="integer inputs in [0, TOKENS) (token ids) instead of random floats")
    r.add_argument("--granularity", type=int, default=2, help="as profiled (default 2)")
    r.add_argument("--steps", type=int, default=5, help="iterations (default 5)")
    r.add_argument("--schedule", choices=["1f1b", "gpipe"],
                   help="micro-batch order (default: the plan's)")
    r.add_argument("--optimizer", choices=["adam", "sgd"], default="adam")
    r.add_argument("--overlap-grad-reduce", action="store_true",
                   help="all-reduce gradient buckets during the last backward pass")
    r.add_argument("--bucket-mib", type=float, default=25,
                   help="gradient bucket size for --overlap-grad-reduce (default 25 MiB)")
    r.add_argument("--lr", type=float, default=1e-3, help="learning rate (default 0.001)")
    r.add_argument("--seed", type=int, default=0, help="model initialisation and data seed")
    r.add_argument("--threads", type=int, default=1, help="intra-op threads per rank")
    r.add_argument("--timeout", type=float, default=60,
                   help="seconds a rank waits for a peer before it gives up (default 60)")
    r.add_argument("--checkpoint", metavar="DIR", help="where checkpoints go")
    r.add_argument("--save-every", type=int, default=0, help="checkpoint every K iterations")
    r.add_argument("--resume", action="store_true", help="continue from DIR's latest checkpoint")
    r.add_argument("--metrics", metavar="FILE", help="write what was measured (JSON)")
    r.add_argument("--trace", metavar="FILE", help="write the last iteration as a Chrome trace")
    r.add_argument("--compare", action="store_true",
                   help="print measured against the plan's prediction per stage")
    r.add_argument("--die", metavar="RANK:STEP",
                   help="fault injection for tests: RANK exits at the start of STEP")
    r.add_argument("--quiet", action="store_true", help="no per-step lines")


def _profiled_input(plan, a):
    """The micro-batch's input shape and token vocabulary: the plan's model records what it was
    profiled at, and its times hold for that input only; a different one is refused."""
    recorded = (plan.get("model_config") or {}).get("profiled_on") or {}
    at = recorded.get("input_shape")
    if a.input_shape is None:
        if not at:
            raise ValueError("--input-shape: the plan's model does not record the input it was "
                             "profiled at; give the shape, the micro-batch first")
        shape = tuple(int(d) for d in at)
    else:
        shape = _shape(a.input_shape)
        if at and list(shape) != [int(d) for d in at]:
            raise ValueError(f"--input-shape {','.join(map(str, shape))}: the plan's model was "
                             f"profiled at {','.join(map(str, at))}, and its times hold for that "
                             f"input only (profile the model again at the new shape)")
    tokens = int(recorded.get("tokens") or 0)
    if a.tokens and at and a.tokens != tokens:
        raise ValueError(f"--tokens {a.tokens}: the plan's model was profiled with "
                         f"{'token inputs of ' + str(tokens) if tokens else 'float inputs'}")
    return shape, a.tokens or tokens


def _warn_if_ranks_share_cores(plan, threads):
    from .device import cores
    try:
        import torch
        if torch.cuda.is_available():
            return
    except ImportError:
        return
    ranks = int(plan.get("devices_used") or 0)
    if ranks * threads > cores():
        print(f"paraplan run: warning: {ranks} ranks × {threads} thread(s) on {cores()} cores: "
              f"the ranks share cores, so each computes slower than a profile taken alone "
              f"(price the plan on a cluster probed with {ranks} ranks: python3 -m paraplan "
              f"probe --nproc {ranks})", file=sys.stderr)


def run_main(a):
    """python3 -m paraplan run: exit 0 trained; 2 a bad command line or plan file; 3 a plan that
    does not match the model or the launch (refused before training); 4 a rank that failed or
    lost its peers; 5 an output file that cannot be written."""
    try:
        with open(a.plan, encoding="utf-8") as f:
            plan = json.load(f)
    except OSError as error:
        print(f"paraplan run: {a.plan}: {error.strerror}", file=sys.stderr)
        return 2
    except json.JSONDecodeError as error:
        print(f"paraplan run: {a.plan}: line {error.lineno}: not JSON ({error.msg})",
              file=sys.stderr)
        return 2
    if not isinstance(plan, dict) or plan.get("format") != "paraplan-plan" or \
            plan.get("planner") != "pipeline" or "model_config" not in plan:
        print(f"paraplan run: {a.plan}: not a pipeline plan of a profiled model (write one with "
              f"paraplan plan PROFILE.json -o PLAN.json)", file=sys.stderr)
        return 2
    try:
        shape, a.tokens = _profiled_input(plan, a)
        die = tuple(int(x) for x in a.die.split(":")) if a.die else None
        if die is not None and len(die) != 2:
            raise ValueError
    except ValueError as error:
        print(f"paraplan run: {error if str(error) else '--die: expected RANK:STEP'}",
              file=sys.stderr)
        return 2
    if a.steps < 1 or (a.resume and not a.checkpoint) or (a.save_every and not a.checkpoint):
        print("paraplan run: --steps must be at least 1, and --resume and --save-every need "
              "--checkpoint DIR", file=sys.stderr)
        return 2
    microbatches = int(plan.get("microbatches") or 1)
    schedule = a.schedule or ("gpipe" if plan.get("schedule") == "gpipe" else "1f1b")
    options = {"steps": a.steps, "schedule": schedule, "optimizer": a.optimizer, "lr": a.lr,
               "seed": a.seed, "threads": a.threads, "timeout": a.timeout,
               "tokens": a.tokens, "granularity": a.granularity, "microbatches": microbatches,
               "micro_batch": shape[0], "micro_shape": shape,
               "batch_shape": (shape[0] * microbatches,) + shape[1:],
               "checkpoint": a.checkpoint, "save_every": a.save_every, "resume": a.resume,
               "die": die, "verbose": not a.quiet, "overlap": a.overlap_grad_reduce,
               "bucket_mib": a.bucket_mib}
    from . import Error, run_report, runtime, schedule_of, simulate
    # Before training, always: the core reads the plan (a plan it cannot replay is refused at
    # once) and gives the schedule every rank executes, the one its simulator replays.
    try:
        simulation = simulate(a.plan, schedule=schedule)
        passes = schedule_of(a.plan, schedule=schedule)
    except Error as error:
        print(f"paraplan run: {error}", file=sys.stderr)
        return 2
    config = {"plan": plan, "options": options, "module": a.model, "args": a.arg,
              "schedule": passes}
    _warn_if_ranks_share_cores(plan, a.threads)
    try:
        import torch
        module = load_module(a.model, a.arg)
        torch.manual_seed(a.seed)
        example, _ = runtime.make_batch(0, shape, a.tokens, (1, 1), a.seed)
        try:
            runtime.Partition(module, plan, runtime.Layout(passes), a.granularity, example)
        except (RuntimeError, TypeError, IndexError) as error:  # the module on this input
            raise runtime.RunError(f"{a.model} does not run on input shape "
                                   f"{','.join(map(str, shape))}: {type(error).__name__}: "
                                   f"{str(error).splitlines()[0] if str(error) else ''}")
        summary = runtime.launch(config)
    except ValueError as error:  # RunError included; a rank's failure carries its exit code
        print(f"paraplan run: {error}", file=sys.stderr)
        return getattr(error, "code", 3 if isinstance(error, runtime.RunError) else 2)
    if summary is None:  # a torchrun rank other than 0
        return 0
    prediction = run_report.prediction_of(plan, simulation)
    document = run_report.metrics(summary, plan, prediction)
    if a.metrics and not _write_json(a.metrics, document, "run"):
        return 5
    if a.trace and not _write_json(a.trace, run_report.chrome_trace(summary, plan), "run"):
        return 5
    losses = ", ".join(f"{x:.6f}" for x in document["losses"])
    print(f"trained {len(document['losses'])} iterations of {microbatches} micro-batches "
          f"({schedule}) on {len(document['ranks'])} ranks: losses {losses}; iteration "
          f"{document['iteration_time_s']:.4f} s (median), bubble "
          f"{100 * document['bubble_fraction']:.1f} %")
    if a.compare:
        print(run_report.comparison_table(document))
    return 0


def probe_main(a):
    try:
        sizes = [int(x) for x in a.sizes.split(",")]
    except ValueError:
        print(f"paraplan probe: --sizes {a.sizes}: expected byte counts separated by commas",
              file=sys.stderr)
        return 2
    if not _can_write(a.output, "probe"):
        return 5
    from .probe import ProbeError, probe
    try:
        document, measured = probe(nproc=a.nproc, sizes=sizes, repeats=a.repeats,
                                   threads=a.threads)
    except ProbeError as error:
        print(f"paraplan probe: {error}", file=sys.stderr)
        return error.code
    if not _write_json(a.output, document, "probe"):
        return 5
    print(f"{a.nproc} ranks of {document['device_types'][0]['name']}: "
          f"{document['device_types'][0]['peak_flops_per_s'] / 1e9:.1f} GFLOP/s each (matmul)")
    print(f"{'bytes':>10} {'p2p one way (s)':>16} {'all-reduce (s)':>15}")
    for size in sizes:
        print(f"{size:>10} {measured['p2p_one_way_s'][size]:>16.6f} "
              f"{measured['allreduce_s'][size]:>15.6f}")
    fit = measured["fit"]
    print(f"fitted link: {fit['bandwidth_bytes_per_s'] / 1e9:.3f} GB/s, latency "
          f"{fit['latency_s'] * 1e6:.1f} us; all-reduce priced at "
          f"{fit['allreduce_bandwidth_bytes_per_s'] / 1e9:.3f} GB/s; written to {a.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
