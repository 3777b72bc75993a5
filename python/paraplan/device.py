"""What a rank computes on and how fast: the device's name as profiles and probed clusters give
it, and its matmul rate (FLOP/s) at a number of intra-op threads. The profiler measures the rate
alone, the probe while every rank runs; the planner scales a profile's compute by their ratio."""

import os
import platform
import statistics
import time

import torch


def device_name(device=None):
    """The GPU's name, or "cpu (ARCH)"."""
    device = torch.device(device) if device is not None else torch.device("cpu")
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"cpu ({platform.processor() or platform.machine()})"


def cores():
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def matmul_flops_per_s(threads=1, size=512, repeats=5, device=None, min_seconds=1.0):
    """Median FLOP/s of a size × size float32 matmul at `threads` intra-op threads, over at
    least `repeats` runs and `min_seconds` of them (a VM's speed swings by a quarter from one
    second to the next: a tenth of a second of samples is not a rate)."""
    device = torch.device(device) if device is not None else torch.device("cpu")
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        a = torch.randn(size, size, device=device)
        b = torch.randn(size, size, device=device)

        def once():
            start = time.perf_counter()
            torch.mm(a, b)
            if device.type == "cuda":
                torch.cuda.synchronize(device)
            return time.perf_counter() - start

        once()  # warm-up
        times = []
        while len(times) < max(1, repeats) or sum(times) < min_seconds:
            times.append(once())
        return 2 * size ** 3 / statistics.median(times)
    finally:
        torch.set_num_threads(previous)
