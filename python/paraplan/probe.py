"""The cluster a plan will run on, measured: point-to-point bandwidth and latency and all-reduce
time between ranks over message sizes (torch.distributed: gloo on CPU, NCCL when CUDA is
present), each device's matmul rate, written as a paraplan cluster document.

The ranks here share one machine, so the document has one machine and one link tier, fitted as
``time = latency + bytes / bandwidth`` to the one-way point-to-point times, with the bandwidth
that prices the measured all-reduce times in the cost models' formula
(``allreduce_bandwidth_bytes_per_s``).
"""

import os
import socket
import tempfile
import warnings

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from .device import cores, device_name, matmul_flops_per_s
from ._paraplan import Error
from .graphs import median_time


class ProbeError(Error, RuntimeError):
    """The probe could not run; the message says why. ``code`` is the exit code of its kind:
    2 for a wrong argument (as :class:`paraplan.UsageError`), 3 for a measurement that cannot be
    used or a rank that failed."""

    def __init__(self, message, code=3):
        super().__init__(message)
        self.code = code


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _median(function, repeats):
    return median_time(function, 0, repeats)  # the callers warm up themselves


def _worker(rank, nproc, port, sizes, repeats, matmul_size, threads, out_dir):
    torch.set_num_threads(threads)
    cuda = torch.cuda.is_available()
    backend = "nccl" if cuda else "gloo"
    if cuda:
        torch.cuda.set_device(rank % torch.cuda.device_count())
    device = torch.device("cuda", torch.cuda.current_device()) if cuda else torch.device("cpu")
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=nproc)

    def sync():
        if cuda:
            torch.cuda.synchronize()

    result = {"p2p": {}, "allreduce": {}}
    for size in sizes:
        x = torch.zeros(max(1, size // 4), dtype=torch.float32, device=device)

        def ping_pong():
            if rank == 0:
                dist.send(x, 1)
                dist.recv(x, 1)
            elif rank == 1:
                dist.recv(x, 0)
                dist.send(x, 0)
            sync()

        ping_pong()  # warm-up
        dist.barrier()
        result["p2p"][size] = _median(ping_pong, repeats) / 2  # one way

        def allreduce():
            dist.all_reduce(x)
            sync()

        allreduce()
        dist.barrier()
        result["allreduce"][size] = _median(allreduce, repeats)
    dist.barrier()  # every rank multiplies at once: the rate a rank gets while all run
    result["flops_per_s"] = matmul_flops_per_s(threads, matmul_size, repeats, device)
    if cuda:
        result["memory_bytes"] = torch.cuda.get_device_properties(device).total_memory
        result["device"] = device_name(device)
    torch.save(result, os.path.join(out_dir, f"rank{rank}.pt"))
    dist.barrier()
    dist.destroy_process_group()


def _fit(times, what="point-to-point"):
    """Least squares of time = latency + bytes / bandwidth; latency clamped at 0."""
    xs, ys = zip(*sorted(times.items()))
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0
    if slope <= 0:
        raise ProbeError(f"the {what} times do not grow with the message size; "
                         f"use larger --sizes")
    return max(0.0, my - slope * mx), 1.0 / slope


def _memory_bytes():
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def probe(nproc=2, sizes=(1 << 12, 1 << 16, 1 << 20, 1 << 22, 1 << 24, 1 << 26), repeats=5,
          matmul_size=512,
          threads=1):
    """Measures `nproc` ranks on this machine; returns (cluster document, measurements)."""
    if nproc < 2:
        raise ProbeError(f"nproc {nproc}: the probe needs at least 2 ranks to measure links",
                         code=2)
    if nproc * threads > cores() and not torch.cuda.is_available():
        warnings.warn(f"{nproc} ranks × {threads} thread(s) on {cores()} cores: the ranks share "
                      f"cores, and each measures the rate it gets while all run (a plan priced "
                      f"on it is slower than on a machine with a core per rank)")
    if len(sizes) < 2 or min(sizes) < 4:
        raise ProbeError("sizes: give at least two message sizes of 4 bytes or more", code=2)
    with tempfile.TemporaryDirectory() as out_dir:
        try:
            mp.spawn(_worker, args=(nproc, _free_port(), list(sizes), repeats, matmul_size,
                                    threads, out_dir), nprocs=nproc, join=True)
        except Exception as error:  # a rank failed: its traceback is in the message
            raise ProbeError(f"a rank failed: {error}") from None
        ranks = [torch.load(os.path.join(out_dir, f"rank{r}.pt")) for r in range(nproc)]
    p2p = ranks[0]["p2p"]
    latency, bandwidth = _fit(p2p)
    # The all-reduce as the cost models price it: 4 (n - 1) / n x bytes / bandwidth (Piper's
    # formula); the slope over the sizes gives the bandwidth that makes it match.
    share = 4.0 * (nproc - 1) / nproc
    _, allreduce_bandwidth = _fit({share * size: t for size, t in ranks[0]["allreduce"].items()},
                                  "all-reduce")
    cuda = "device" in ranks[0]
    device = ranks[0]["device"] if cuda else device_name()
    memory = ranks[0]["memory_bytes"] if cuda else _memory_bytes() // nproc
    flops = min(r["flops_per_s"] for r in ranks)
    document = {
        "format": "paraplan-cluster", "version": 1,
        "name": f"probe-{socket.gethostname()}-{nproc}",
        "device_types": [{"name": device, "memory_bytes": memory, "peak_flops_per_s": flops}],
        "machines": [{"devices": nproc, "device_type": device}],
        "tiers": [{"name": "nccl" if cuda else "gloo (same machine)",
                   "bandwidth_bytes_per_s": bandwidth, "latency_s": latency,
                   "allreduce_bandwidth_bytes_per_s": allreduce_bandwidth}],
        "links": []}
    measurements = {"p2p_one_way_s": p2p, "allreduce_s": ranks[0]["allreduce"],
                    "matmul_flops_per_s": [r["flops_per_s"] for r in ranks],
                    "fit": {"latency_s": latency, "bandwidth_bytes_per_s": bandwidth,
                            "allreduce_bandwidth_bytes_per_s": allreduce_bandwidth}}
    return document, measurements
