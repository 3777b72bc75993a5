"""Measured against predicted: profile -> probe -> plan -> run on this machine, for the package's
GPT and a torchvision model, each with the planner's best plan and a two-stage pipeline of the
same profile, in rounds (a profile and the runs right after it, so both see the machine in the
same state). Prints every round and the median error per case; exit 1 when a median error is
above 10 % (the first-hour issue's target for pipelines as for data parallelism).

    ./dev py bench/run_vs_predicted.py [--rounds 3] [--steps N] [--nproc 2] [--cases gpt,...]
                                       [--quick]

The probe measures the ranks' matmul rate while all run; the profile records its device's rate
alone; the plan scales the profile's compute by their ratio (ranks that share cores each run
slower than a profile taken alone).
"""

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile

BINARY = os.environ.get("PARAPLAN_BINARY",
                        os.path.join(os.path.dirname(__file__), "..", "build", "src", "paraplan"))

CASES = {
    "gpt": {"model": ["--model", "paraplan.models:gpt", "--arg", "layers=6"],
            "shape": "2,128", "tokens": "1024", "microbatches": 8, "steps": 8},
    "resnet18": {"model": ["--model", "torchvision.models:resnet18"],
                 "shape": "4,3,64,64", "tokens": None, "microbatches": 4, "steps": 30},
    "mobilenet_v3_small": {"model": ["--model", "torchvision.models:mobilenet_v3_small"],
                           "shape": "8,3,64,64", "tokens": None, "microbatches": 8,
                           "steps": 20},
}
QUICK = {
    "gpt": {"model": ["--model", "paraplan.models:gpt", "--arg", "layers=4", "--arg",
                      "hidden=128", "--arg", "seq_len=64"],
            "shape": "2,64", "tokens": "1024", "microbatches": 4, "steps": 4},
    "resnet18": dict(CASES["resnet18"], shape="2,3,32,32", steps=4),
    "mobilenet_v3_small": dict(CASES["mobilenet_v3_small"], shape="2,3,32,32", steps=4),
}


def python(*args, check=True):
    run = subprocess.run([sys.executable, "-m", "paraplan", *args], capture_output=True,
                         text=True)
    if check and run.returncode != 0:
        sys.exit(f"python3 -m paraplan {' '.join(args)} failed:\n{run.stderr}")
    return run


def two_stages(plan):
    """The same profile cut into two stages of one device each (layers split where the
    profile's compute halves), the schedule 1F1B."""
    out = copy.deepcopy(plan)
    layers = sorted(out["model_config"]["layers"], key=lambda layer: layer["id"])
    times = [layer["options"]["1"][0]["compute_time_s"] for layer in layers]
    total, running, cut = sum(times), 0.0, 1
    for i, t in enumerate(times[:-1]):
        running += t
        if running >= total / 2:
            cut = i + 1
            break
    ids = [layer["id"] for layer in layers]
    out["stages"] = [{"layers": part, "options": ["vanilla"] * len(part), "data_parallel": 1,
                      "tensor_parallel": 1, "device_ids": [s], "inflight_microbatches": 2 - s,
                      "time": 0, "compute_time": 0, "communication_time": 0,
                      "allreduce_time": 0, "memory_bytes": 0}
                     for s, part in enumerate([ids[:cut], ids[cut:]])]
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, help="iterations per run (default: per model)")
    parser.add_argument("--quick", action="store_true", help="small models (a smoke test)")
    parser.add_argument("--nproc", type=int, default=2, help="ranks to probe and plan for")
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    a = parser.parse_args()
    cases = QUICK if a.quick else CASES
    if a.cases:
        unknown = [c for c in a.cases.split(",") if c not in cases]
        if unknown:
            sys.exit(f"--cases: unknown {', '.join(unknown)} (known: {', '.join(cases)})")
        cases = {c: cases[c] for c in a.cases.split(",")}
    work = tempfile.mkdtemp(prefix="paraplan-bench-run-")
    cluster = os.path.join(work, "cluster.json")
    python("probe", "--nproc", str(a.nproc), "-o", cluster)
    print(f"{'case':<36} {'round':>5} {'measured (s)':>13} {'predicted (s)':>14} {'error':>8}")
    errors = {}
    for name, case in cases.items():
        for round_ in range(a.rounds):
            profile = os.path.join(work, f"{name}.json")
            tokens = ["--tokens", case["tokens"]] if case["tokens"] else []
            python("profile", case["model"][1], *case["model"][2:], "--input-shape",
                   case["shape"], *tokens, "--microbatches", str(case["microbatches"]),
                   "-o", profile)
            best = os.path.join(work, f"{name}-plan.json")
            subprocess.run([BINARY, "plan", profile, "--cluster", cluster, "-o", best,
                            "--quiet"], check=True, capture_output=True)
            with open(best, encoding="utf-8") as f:
                plan = json.load(f)
            # Piper's steady-state objective's plan on the same profile: what the planner chose
            # before it minimised the iteration.
            steady = os.path.join(work, f"{name}-steady.json")
            subprocess.run([BINARY, "plan", profile, "--cluster", cluster, "-o", steady,
                            "--objective", "steady-state", "--quiet"], check=True,
                           capture_output=True)
            with open(steady, encoding="utf-8") as f:
                steady_plan = json.load(f)
            pipeline = os.path.join(work, f"{name}-2stages.json")
            with open(pipeline, "w", encoding="utf-8") as f:
                json.dump(two_stages(plan), f)
            def shape(p):
                return "+".join(f"{s['data_parallel']}x" for s in p["stages"])
            shape_of = {best: "best " + shape(plan), pipeline: "2 stages"}
            if steady_plan["stages"] != plan["stages"]:
                shape_of[steady] = "steady " + shape(steady_plan)
            scaling = plan.get("compute_scaling", {}).get("device_types", [{}])[0]
            if round_ == 0 and scaling:
                print(f"{name}: compute scaled x{scaling['time_factor']:.3f} (profiled alone "
                      f"against {a.nproc} ranks probed together)", flush=True)
            for path in shape_of:
                metrics = os.path.join(work, "metrics.json")
                python("run", path, *case["model"], "--input-shape", case["shape"], *tokens,
                       "--steps", str(a.steps or case["steps"]), "--compare", "--quiet",
                       "--metrics", metrics)
                with open(metrics, encoding="utf-8") as f:
                    measured = json.load(f)
                it = measured["iteration_time_s"]
                predicted = measured["predicted"]["iteration_time_s"]
                error = it / predicted - 1
                label = f"{name} {shape_of[path]}"
                errors.setdefault(label, []).append(error)
                print(f"{label:<36} {round_ + 1:>5} {it:>13.4f} {predicted:>14.4f} "
                      f"{100 * error:>+7.1f}%", flush=True)
    print()
    worst = 0.0
    for label, values in errors.items():
        median = statistics.median(values)
        worst = max(worst, abs(median))
        print(f"{label:<36} median error {100 * median:+.1f} % over {len(values)} rounds "
              f"(spread {100 * (max(values) - min(values)):.1f} points)")
    print(f"largest median error {100 * worst:.1f} % (target 10 %)")
    return 0 if worst <= 0.10 else 1


if __name__ == "__main__":
    sys.exit(main())
