#!/usr/bin/env python3
"""A large layer graph for the coarsening path: writes a paraplan model of N layers (default
5,000) in blocks of a residual network with a branch per block (so the exact search's layer sets
explode), then times `paraplan plan MODEL --coarsen K` for several K and, where the exact search
can run, compares with it.

    python3 bench/large_graph.py [--layers 5000] [--binary build/src/paraplan]

Prints per K: the objective, its gap to the smallest objective found, CPU and wall seconds and
peak memory (from /usr/bin/time).
"""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile


def model(layers, seed=7):
    rng = random.Random(seed)
    out = {"format": "paraplan-model", "version": 1, "name": f"residual-{layers}",
           "microbatches": 64, "layers": [], "edges": []}
    for i in range(layers):
        compute = rng.uniform(0.5e-3, 2e-3)
        weights = rng.choice([0.5e6, 2e6, 8e6])
        options = {"1": [
            {"id": "vanilla", "compute_time_s": compute, "parameter_bytes": weights,
             "memory_per_inflight_bytes": 4e6, "memory_fixed_bytes": 4 * weights},
            {"id": "recompute", "compute_time_s": compute * 1.33, "parameter_bytes": weights,
             "memory_per_inflight_bytes": 0.5e6, "memory_fixed_bytes": 4 * weights}]}
        out["layers"].append({"id": i, "name": f"layer {i}", "options": options})
        if i > 0:
            out["edges"].append({"from": i - 1, "to": i, "bytes": 2e6})
        # every block of 5: a skip from its first layer to its last, and a side branch
        if i % 5 == 4 and i >= 4:
            out["edges"].append({"from": i - 4, "to": i, "bytes": 2e6})
        if i % 5 == 2 and i + 2 < layers and i >= 2:
            out["edges"].append({"from": i - 1, "to": i + 2, "bytes": 1e6})
    return out


def run(binary, path, extra):
    command = ["/usr/bin/time", "-f", "%U %S %e %M", binary, "plan", path, "--objective", "steady-state", "--devices", "16",
               "--memory", "8GiB", "--bandwidth", "25GB/s", "--json", "--quiet"] + extra
    r = subprocess.run(command, capture_output=True, text=True)
    user, system, wall, kb = r.stderr.strip().splitlines()[-1].split()
    if r.returncode != 0:
        return None, float(user) + float(system), float(wall), int(kb), r.stderr.splitlines()[0]
    return json.loads(r.stdout)["objective"], float(user) + float(system), float(wall), int(kb), ""


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layers", type=int, default=5000)
    p.add_argument("--binary", default=os.path.join(here, "..", "build", "src", "paraplan"))
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "model.json")
        with open(path, "w") as f:
            json.dump(model(a.layers), f)
        rows = []
        for k in [16, 32, 64, 128]:
            rows.append((f"--coarsen {k}",) + run(a.binary, path, ["--coarsen", str(k)]))
        if a.layers <= 1000:  # the exact search, where it runs in reasonable time
            rows.append(("exact",) + run(a.binary, path, []))
        best = min(r[1] for r in rows if r[1] is not None)
        print(f"{a.layers} layers, 16 devices, 8 GiB, 25 GB/s, 64 micro-batches")
        print(f"{'search':<14} {'objective s':>12} {'gap':>8} {'CPU s':>7} {'wall s':>7} {'peak MB':>8}")
        for name, objective, cpu, wall, kb, error in rows:
            if objective is None:
                print(f"{name:<14} {error}")
                continue
            print(f"{name:<14} {objective:>12.6g} {objective / best - 1:>8.2%} {cpu:>7.2f} "
                  f"{wall:>7.2f} {kb / 1024:>8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
