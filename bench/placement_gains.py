#!/usr/bin/env python3
"""Placement against rank order, on every DAPPLE profile and every network preset.

For each profile × cluster × micro-batch count: `paraplan plan PROFILE --cost-model piper
--cluster C --devices K --microbatches N --json`, which plans the stages, places every stage
replica on the cluster's links and replays both the placed plan and rank order in the simulator.
Prints the placement cost model's figure and the simulated iteration for both, their ratio, and
the planner's wall time; exits 1 if a placed plan is slower than rank order in simulation.

    python3 bench/placement_gains.py [--binary build/src/paraplan] [--data data]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PROFILES = ["vgg-19-pbs-32", "bert-24-pbs-6", "bert-48-pbs-2", "amoeba-18-pbs-8",
            "amoeba-36-pbs-1", "xlnet-24-pbs-1", "xlnet-36-pbs-1"]
CLUSTERS = [("pcie-2socket", 8), ("oversubscribed-2to1", 32), ("oversubscribed-2to1", 64),
            ("dgx-a100-rails", 32), ("dgx-a100", 32)]
MICROBATCHES = [8, 32]


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=os.path.join(here, "..", "build", "src", "paraplan"))
    parser.add_argument("--data", default=os.path.join(here, "..", "data"))
    args = parser.parse_args()
    print(f"{'profile':<16} {'cluster':<20} {'K':>3} {'N':>3} {'stages':>6} "
          f"{'cost placed s':>13} {'rank order s':>12} {'sim placed s':>12} {'rank order s':>12} "
          f"{'ratio':>7} {'exact':>5} {'wall s':>6}")
    worse, ratios = [], {}
    for cluster, devices in CLUSTERS:
        for profile in PROFILES:
            for n in MICROBATCHES:
                command = [args.binary, "plan", "--objective", "steady-state", os.path.join(args.data, "dapple", profile + ".txt"),
                           "--cost-model", "piper", "--cluster", cluster, "--devices",
                           str(devices), "--microbatches", str(n), "--json", "--quiet"]
                start = time.monotonic()
                run = subprocess.run(command, capture_output=True, text=True)
                wall = time.monotonic() - start
                if run.returncode != 0:
                    print(f"{profile:<16} {cluster:<20} {devices:>3} {n:>3}  "
                          f"{run.stderr.strip()}")
                    continue
                plan = json.loads(run.stdout)
                p = plan["placement"]
                placed, ranked = plan["placed_simulated_s"], plan["rank_order_simulated_s"]
                ratio = placed / ranked
                ratios.setdefault(cluster, []).append(ratio)
                if placed > ranked * (1 + 1e-12):
                    worse.append((profile, cluster, n))
                print(f"{profile:<16} {cluster:<20} {devices:>3} {n:>3} {len(plan['stages']):>6} "
                      f"{p['cost_s']:>13.6g} {p['rank_order_cost_s']:>12.6g} {placed:>12.6g} "
                      f"{ranked:>12.6g} {ratio:>7.4f} {str(p['exact']):>5} {wall:>6.2f}")
    print()
    for cluster, r in ratios.items():
        print(f"{cluster:<20} simulated placed / rank order: best {min(r):.4f}, "
              f"geometric mean {statistics.geometric_mean(r):.4f}, worst {max(r):.4f} "
              f"over {len(r)} plans")
    if worse:
        print("placed plans slower than rank order:", worse)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
