"""Launching a run: every rank's process (or torchrun's), its loop over the iterations with
checkpoints, what it measured, and watching the ranks so one failure stops them all."""

import datetime
import os
import statistics
import sys
import time

import torch
import torch.distributed as dist

from .checkpoints import latest_checkpoint, load_checkpoint, names_of, plan_signature, save
from .executor import Stage
from .modules import load_module
from .partition import Partition, make_batch
from .ranks import Layout, RunError


def worker(rank, world, config):
    """One rank's whole run; returns rank 0's summary (others: None)."""
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
        names = names_of(module)
        layout = Layout(config["schedule"])
        if rank == 0 and options.get("verbose") and \
                layout.device_of_rank != list(range(layout.world)):
            print("placed on part of a cluster: rank i runs on cluster device " +
                  ", ".join(f"{i} -> {d}" for i, d in enumerate(layout.device_of_rank)), flush=True)
        example, _ = make_batch(0, options["micro_shape"], options["tokens"], (1, 1),
                                options["seed"])
        partition = Partition(module, plan, layout, options["granularity"], example)
        stage = Stage(rank, layout, partition, plan, options, device, config["schedule"])
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
            save(stage, names, options["checkpoint"], number + 1, signature)
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
    world = Layout(config["schedule"]).world
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
