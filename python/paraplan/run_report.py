"""What a run measured, per stage and against the plan's prediction: the metrics document, the
Chrome trace (the simulator's format: a process per rank, threads compute / pipeline / data
parallel, one iteration) and the measured-versus-predicted table."""

import statistics


def stage_figures(summary, plan):
    """Per stage: its ranks' median busy seconds per iteration (forward, backward, optimizer),
    idle seconds, forward and backward seconds per micro-batch, peak tracked bytes."""
    iteration = summary["iteration_time_s"]
    out = []
    for s, stage in enumerate(plan["stages"]):
        ranks = [r for r in summary["ranks"] if r["stage"] == s]
        busy = statistics.mean(r["busy_s"] for r in ranks)
        out.append({"stage": s, "ranks": [r["rank"] for r in ranks],
                    "data_parallel": stage.get("data_parallel", 1),
                    "tensor_parallel": stage.get("tensor_parallel", 1),
                    "busy_s": busy, "idle_s": max(0.0, iteration - busy),
                    "forward_s": statistics.mean(r["forward_s"] for r in ranks),
                    "backward_s": statistics.mean(r["backward_s"] for r in ranks),
                    "peak_bytes": max(r["peak_bytes"] for r in ranks)})
    return out


def metrics(summary, plan, prediction=None):
    """The run as a JSON document (losses, step times, iteration, bubble, per stage and rank)."""
    stages = stage_figures(summary, plan)
    iteration = summary["iteration_time_s"]
    busy = statistics.mean(st["busy_s"] for st in stages)
    document = {"format": "paraplan-run", "version": 1, "model": plan.get("model", ""),
                "microbatches": plan.get("microbatches", 1), "first_step": summary["first_step"],
                "losses": summary["losses"], "step_times_s": summary["step_times_s"],
                "iteration_time_s": iteration,
                "bubble_fraction": max(0.0, 1 - busy / iteration) if iteration > 0 else 0.0,
                "stages": stages,
                "ranks": [{k: v for k, v in r.items() if k != "events"}
                          for r in summary["ranks"]]}
    if prediction is not None:
        document["predicted"] = prediction
    return document


def chrome_trace(summary, plan):
    """The last iteration of every rank as a Chrome trace, laid out as ``paraplan simulate
    --trace`` lays out its prediction."""
    events = []
    streams = ["compute", "pipeline", "data parallel"]
    for r in summary["ranks"]:
        pid = r["rank"] + 1
        name = f"rank {r['rank']}: stage {r['stage']} replica {r['replica']}"
        if plan["stages"][r["stage"]].get("tensor_parallel", 1) > 1:
            name += f" tp {r['tensor_parallel_index']}"
        events.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                       "args": {"name": name}})
        events.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                       "args": {"sort_index": pid}})
        for tid, stream in enumerate(streams):
            events.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": tid,
                           "args": {"name": stream}})
        for label, category, stream, start, end, microbatch in r["events"]:
            args = {"phase": category, "stage": r["stage"]}
            if microbatch >= 0:
                args["microbatch"] = microbatch
            events.append({"ph": "X", "name": label, "cat": category, "pid": pid, "tid": stream,
                           "ts": start * 1e6, "dur": (end - start) * 1e6, "args": args})
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def prediction_of(plan, simulation):
    """The plan's own figures for the comparison: the simulated iteration and, per stage, the
    busy seconds of its first replica and the predicted seconds per micro-batch."""
    devices = simulation.get("devices", [])
    stages, index = [], 0
    for stage in plan["stages"]:
        d = stage.get("data_parallel", 1)
        busy = devices[index]["busy_s"] if index < len(devices) else None
        index += d
        stages.append({"busy_s": busy,
                       "microbatch_s": stage.get("compute_time", 0) * d,
                       "memory_bytes": stage.get("memory_bytes")})
    return {"iteration_time_s": simulation.get("iteration_time"), "stages": stages,
            "bubble_fraction": simulation.get("bubble_fraction")}


def _ratio(measured, predicted):
    if not predicted:
        return "    -"
    return f"{100 * (measured / predicted - 1):+6.1f} %"


def comparison_table(document):
    """Measured against predicted, per stage and for the iteration, as text."""
    predicted = document["predicted"]
    lines = [f"{'stage':>5} {'ranks':>8} {'F+B per mb (s)':>15} {'predicted':>10} {'diff':>9} "
             f"{'busy (s)':>9} {'predicted':>10} {'diff':>9} {'idle (s)':>9} "
             f"{'peak (GiB)':>10} {'predicted':>10}"]
    for st, pr in zip(document["stages"], predicted["stages"]):
        per_mb = st["forward_s"] + st["backward_s"]
        memory = pr["memory_bytes"] / 2**30 if pr["memory_bytes"] else 0.0
        lines.append(f"{st['stage']:>5} {','.join(map(str, st['ranks'])):>8} {per_mb:>15.4f} "
                     f"{pr['microbatch_s']:>10.4f} {_ratio(per_mb, pr['microbatch_s']):>9} "
                     f"{st['busy_s']:>9.4f} {pr['busy_s'] or 0:>10.4f} "
                     f"{_ratio(st['busy_s'], pr['busy_s']):>9} {st['idle_s']:>9.4f} "
                     f"{st['peak_bytes'] / 2**30:>10.3f} {memory:>10.3f}")
    it, pit = document["iteration_time_s"], predicted["iteration_time_s"]
    lines.append(f"iteration: measured {it:.4f} s, predicted {pit:.4f} s "
                 f"({_ratio(it, pit).strip()}); bubble measured "
                 f"{100 * document['bubble_fraction']:.1f} %, predicted "
                 f"{100 * (predicted['bubble_fraction'] or 0):.1f} %")
    return "\n".join(lines)
