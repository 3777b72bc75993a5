"""The runtime trains exactly what single-process training trains: on a fixed seed, the losses
and final parameters of every plan shape equal those of plain training of the same model on the
same micro-batches; checkpoints resume to the same losses; a dead rank stops the run with a clear
error; mismatched plans are refused before training."""
import copy
import json
import os
import subprocess
import sys
import time

import pytest
import torch

from paraplan import runtime
from paraplan.__main__ import load_module

GPT = ["--model", "paraplan.models:gpt", "--arg", "layers=4", "--arg", "hidden=32",
       "--arg", "heads=4", "--arg", "seq_len=16", "--arg", "vocab=64"]
MICRO_SHAPE = (2, 16)
MICROBATCHES = 4
STEPS = 5


@pytest.fixture(scope="module")
def profile(tmp_path_factory):
    path = tmp_path_factory.mktemp("profile") / "gpt.json"
    run = subprocess.run([sys.executable, "-m", "paraplan", "profile", GPT[1], *GPT[2:],
                          "--input-shape", "2,16", "--tokens", "64", "--microbatches",
                          str(MICROBATCHES), "--repeats", "1", "--warmup", "0",
                          "--min-seconds", "0", "-o", str(path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return json.loads(path.read_text())


def make_plan(profile, stages, schedule="1f1b"):
    """A pipeline plan of the profile with the given stages: (layer names, d, t, recompute)."""
    by_name = {layer["name"]: layer["id"] for layer in profile["layers"]}
    out = []
    for s, (names, d, t, recompute) in enumerate(stages):
        recomputable = {layer["name"] for layer in profile["layers"]
                        if any(o["id"] == "recompute" for o in layer["options"]["1"])}
        out.append({"layers": [by_name[n] for n in names],
                    "options": ["recompute" if recompute and n in recomputable else "vanilla"
                                for n in names],
                    "data_parallel": d, "tensor_parallel": t,
                    "inflight_microbatches": len(stages) - s,
                    # The core prices the plan again: its figures are its own.
                    "time": None, "compute_time": 0, "communication_time": 0,
                    "allreduce_time": 0, "memory_bytes": 0})
    model = copy.deepcopy(profile)  # tests change plans, not the profile
    # A stage split t ways needs its layers' options on t devices (the runtime shards the GPT's
    # blocks Megatron-style): the profile's, each device doing its share.
    for names, _, t, _ in stages:
        for layer in model["layers"]:
            if layer["name"] in names and t > 1:
                layer["options"][str(t)] = [
                    dict(o, **{k: o[k] / t for k in ("compute_time_s", "forward_time_s")
                               if k in o})
                    for o in layer["options"]["1"]]
    devices = sum(d * t for _, d, t, _ in stages)
    return {"format": "paraplan-plan", "version": 1, "planner": "pipeline", "cost_model": "piper",
            "model": "gpt", "feasible": True, "objective": None, "schedule": schedule,
            "microbatches": MICROBATCHES, "pipeline_replicas": 1, "devices_used": devices,
            "stages": out,
            "model_config": model,
            "piper_settings": {"max_devices": devices, "memory_per_device_bytes": 1e12,
                               "bandwidth_bytes_per_s": 1e9, "microbatches": MICROBATCHES}}


def reference(optimizer):
    options = {"threads": 1, "micro_shape": MICRO_SHAPE, "tokens": 64, "seed": 0,
               "optimizer": optimizer, "lr": 0.01 if optimizer == "sgd" else 1e-3,
               "micro_batch": MICRO_SHAPE[0], "microbatches": MICROBATCHES, "steps": STEPS,
               "batch_shape": (MICRO_SHAPE[0] * MICROBATCHES, MICRO_SHAPE[1])}
    torch.manual_seed(0)
    return runtime.reference(load_module(GPT[1], GPT[3::2]), options)


def run(plan, tmp_path, *extra, steps=STEPS):
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    checkpoint = tmp_path / "checkpoint"
    result = subprocess.run([sys.executable, "-m", "paraplan", "run", str(path), *GPT,
                             "--input-shape", "2,16", "--tokens", "64", "--steps", str(steps),
                             "--checkpoint", str(checkpoint), "--save-every", str(steps),
                             "--metrics", str(tmp_path / "metrics.json"), "--quiet", *extra],
                            capture_output=True, text=True, timeout=300)
    return result


def final_state(tmp_path, steps=STEPS):
    folder = tmp_path / "checkpoint" / f"step-{steps}"
    state = {}
    for entry in sorted(os.listdir(folder)):
        state.update(torch.load(folder / entry)["state"])
    return state


BLOCKS = [f"blocks.{i}" for i in range(4)]
SHAPES = {
    "2 stages, 1F1B": ([(["position", "embed", "blocks.0", "blocks.1"], 1, 1, False),
                        (["blocks.2", "blocks.3", "norm", "head"], 1, 1, False)], "1f1b"),
    "4 stages, GPipe": ([(["position", "embed", "blocks.0"], 1, 1, False),
                         (["blocks.1"], 1, 1, False), (["blocks.2"], 1, 1, False),
                         (["blocks.3", "norm", "head"], 1, 1, False)], "gpipe"),
    "2 stages x 2 replicas": ([(["position", "embed", "blocks.0", "blocks.1"], 2, 1, False),
                               (["blocks.2", "blocks.3", "norm", "head"], 2, 1, False)],
                              "1f1b"),
    "2 stages x 2 replicas, all-reduce overlapped": (
        [(["position", "embed", "blocks.0", "blocks.1"], 2, 1, False),
         (["blocks.2", "blocks.3", "norm", "head"], 2, 1, False)], "1f1b"),
    "recomputation": ([(["position", "embed", "blocks.0", "blocks.1"], 1, 1, True),
                       (["blocks.2", "blocks.3", "norm", "head"], 1, 1, True)], "1f1b"),
    "tensor parallel 2": ([(["position", "embed"], 1, 1, False), (BLOCKS, 1, 2, False),
                           (["norm", "head"], 1, 1, False)], "1f1b"),
}


# Every shape with SGD; Adam (its state) on the shapes that reduce across ranks.
@pytest.mark.parametrize("shape, optimizer", [(shape, "sgd") for shape in SHAPES] +
                         [("2 stages x 2 replicas", "adam"), ("tensor parallel 2", "adam")])
def test_same_training_as_one_process(shape, optimizer, profile, tmp_path):
    stages, schedule = SHAPES[shape]
    lr = "0.01" if optimizer == "sgd" else "0.001"
    # Buckets of 16 KiB: the small model's gradients go in several all-reduces.
    overlap = ["--overlap-grad-reduce", "--bucket-mib", "0.015625"] if "overlapped" in shape \
        else []
    result = run(make_plan(profile, stages, schedule), tmp_path, "--optimizer", optimizer,
                 "--lr", lr, *overlap)
    assert result.returncode == 0, result.stderr
    losses, state = reference(optimizer)
    measured = json.loads((tmp_path / "metrics.json").read_text())
    assert measured["losses"] == pytest.approx(losses, rel=1e-5, abs=1e-6)
    trained = final_state(tmp_path)
    assert sorted(trained) == sorted(state)
    # Adam divides by the gradient's root mean square: where the gradient is zero in exact
    # arithmetic (the key bias: softmax ignores a shift of every score), it turns rounding
    # noise into steps of up to lr, so those entries can differ by lr per step.
    atol = 1e-5 if optimizer == "sgd" else 1e-3 * STEPS
    for name, tensor in state.items():
        assert torch.allclose(trained[name], tensor, rtol=1e-4, atol=atol), name


def test_resume_continues_with_the_same_losses(profile, tmp_path):
    plan = make_plan(profile, SHAPES["2 stages, 1F1B"][0])
    (tmp_path / "whole").mkdir()
    whole = run(plan, tmp_path / "whole")
    assert whole.returncode == 0, whole.stderr
    expected = json.loads((tmp_path / "whole" / "metrics.json").read_text())["losses"]
    first = run(plan, tmp_path, steps=2)
    assert first.returncode == 0, first.stderr
    second = run(plan, tmp_path, "--resume", steps=STEPS)
    assert second.returncode == 0, second.stderr
    resumed = json.loads((tmp_path / "metrics.json").read_text())
    assert resumed["first_step"] == 2
    assert resumed["losses"] == pytest.approx(expected[2:], rel=1e-6)


def test_a_dead_rank_stops_the_run(profile, tmp_path):
    plan = make_plan(profile, SHAPES["2 stages, 1F1B"][0])
    start = time.monotonic()
    result = run(plan, tmp_path, "--die", "1:2", "--timeout", "20")
    assert result.returncode == 4
    assert "rank 1 exited with code 17" in result.stderr
    assert "Traceback" not in result.stderr
    assert time.monotonic() - start < 60


def _split_last_stage(profile):  # a valid plan file whose last stage the runtime cannot shard
    (first, *_), (last, *_) = SHAPES["2 stages, 1F1B"][0]
    return make_plan(profile, [(first, 1, 1, False), (last, 1, 2, False)])


def _without_last_layer(plan):
    for key in ("layers", "options"):
        plan["stages"][0][key].pop()
    return plan


# The core reads and prices every plan before training (exit 2 for a plan file it refuses); the
# runtime then checks the plan against the module (exit 3).
@pytest.mark.parametrize("make, code, message", [
    (lambda profile: _without_last_layer(make_plan(profile, SHAPES["2 stages, 1F1B"][0])), 2,
     "is in no stage"),
    (_split_last_stage, 3, "has parameters outside the GPT's attention and MLP blocks"),
    (lambda profile: dict(make_plan(profile, SHAPES["2 stages, 1F1B"][0]),
                          stages=make_plan(profile, SHAPES["2 stages, 1F1B"][0])["stages"][::-1]),
     2, "stage"),
    (lambda profile: make_plan(profile, SHAPES["2 stages, 1F1B"][0]) | {
        "model_config": dict(profile, layers=[dict(profile["layers"][0], name="renamed")] +
                             profile["layers"][1:])}, 3,
     "but the module, grouped at granularity 2"),
])
def test_mismatched_plans_are_refused_before_training(make, code, message, profile, tmp_path):
    plan = make(profile)
    result = run(plan, tmp_path)
    assert result.returncode == code, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "metrics.json").exists()


def test_torchrun_launches_the_same_training(profile, tmp_path):
    """Under torchrun every rank runs its part (WORLD_SIZE must be the plan's device count);
    the result is the same training as the ranks the command starts itself."""
    plan = make_plan(profile, SHAPES["2 stages, 1F1B"][0])
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    common = [*GPT, "--input-shape", "2,16", "--tokens", "64", "--steps", "3", "--quiet",
              "--optimizer", "sgd", "--lr", "0.01"]
    # torchrun of Debian's torch 1.13 under Python 3.11 fails on its default "--redirects 0"
    # (Std.from_str cannot find the zero flag); redirecting stderr to its log and teeing it back
    # works around it.
    launcher = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--redirects", "2",
                "--tee", "2"]
    # A world of another size is refused by every rank before it joins the others (checked here
    # on one rank with torchrun's environment: torchrun's own log tailing may drop the lines of
    # ranks it stops).
    wrong = subprocess.run([sys.executable, "-m", "paraplan", "run", str(path), *common],
                           capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, RANK="0", WORLD_SIZE="3", LOCAL_RANK="0",
                                    MASTER_ADDR="127.0.0.1", MASTER_PORT="1"))
    assert wrong.returncode == 3, wrong.stderr
    assert "torchrun started 3 ranks but the plan needs 2" in wrong.stderr
    right = subprocess.run([*launcher, "--nproc_per_node", "2", "-m", "paraplan", "run",
                            str(path), *common, "--metrics", str(tmp_path / "m.json")],
                           capture_output=True, text=True, timeout=300)
    assert right.returncode == 0, right.stderr
    losses, _ = reference("sgd")
    measured = json.loads((tmp_path / "m.json").read_text())["losses"]
    assert measured == pytest.approx(losses[:3], rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("text, message", [
    ("{not json", "line 1: not JSON"),
    ('{"format": "paraplan-plan", "planner": "llm"}', "not a pipeline plan of a profiled model"),
])
def test_a_file_that_is_not_a_pipeline_plan_is_refused(text, message, tmp_path):
    path = tmp_path / "plan.json"
    path.write_text(text)
    result = subprocess.run([sys.executable, "-m", "paraplan", "run", str(path), *GPT,
                             "--input-shape", "2,16"], capture_output=True, text=True)
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    missing = subprocess.run([sys.executable, "-m", "paraplan", "run", str(tmp_path / "no.json"),
                              *GPT, "--input-shape", "2,16"], capture_output=True, text=True)
    assert missing.returncode == 2 and "no.json: No such file or directory" in missing.stderr


def test_a_plan_placed_on_part_of_a_cluster_runs_on_consecutive_ranks():
    """The rank layout is the core's (schedule_of's ``ranks``; the C++ test
    Plan.RankLayoutRunsRankIOnTheIthSmallestDevice checks how it is made): the runtime reads it."""
    from paraplan.runtime import Layout, RunError
    schedule = {"ranks": [{"stage": 1, "replica": 0, "tensor_index": 0, "device": 0},
                          {"stage": 0, "replica": 1, "tensor_index": 0, "device": 2},
                          {"stage": 1, "replica": 0, "tensor_index": 1, "device": 5},
                          {"stage": 0, "replica": 0, "tensor_index": 0, "device": 6}]}
    layout = Layout(schedule)
    assert layout.world == 4
    assert layout.device_of_rank == [0, 2, 5, 6]
    assert layout.of == {(0, 0, 0): 3, (0, 1, 0): 1, (1, 0, 0): 0, (1, 0, 1): 2}
    assert layout.stages == [(2, 1), (1, 2)]
    with pytest.raises(RunError, match="no ranks"):
        Layout({})


def test_the_input_it_was_profiled_at_is_the_only_one_it_runs(profile, tmp_path):
    """The profile records its input; run takes it by default and refuses another shape or
    vocabulary in one line (exit 2) before training."""
    recorded = profile["profiled_on"]
    assert recorded["input_shape"] == [2, 16] and recorded["tokens"] == 64
    assert recorded["flops_per_s"] > 0 and recorded["threads"] == 1
    plan = make_plan(profile, [(["position", "embed", *BLOCKS, "norm", "head"], 1, 1, False)])
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    for extra, message in [(["--input-shape", "4,16"], "was profiled at 2,16"),
                           (["--input-shape", "2,16", "--tokens", "32"],
                            "profiled with token inputs of 64")]:
        result = subprocess.run([sys.executable, "-m", "paraplan", "run", str(path), *GPT,
                                 *extra], capture_output=True, text=True, timeout=300)
        assert result.returncode == 2, result.stderr
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    # Without --input-shape and --tokens: the recorded ones.
    result = subprocess.run([sys.executable, "-m", "paraplan", "run", str(path), *GPT,
                             "--steps", "1", "--quiet"], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    # A plan of a profile that records nothing needs the shape, and a wrong one is one line.
    del plan["model_config"]["profiled_on"]
    path.write_text(json.dumps(plan))
    result = subprocess.run([sys.executable, "-m", "paraplan", "run", str(path), *GPT],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and "does not record the input" in result.stderr
    result = subprocess.run([sys.executable, "-m", "paraplan", "run", str(path), *GPT,
                             "--input-shape", "2,99", "--tokens", "64", "--steps", "1"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 3, result.stderr
    assert "does not run on input shape 2,99" in result.stderr
    assert "Traceback" not in result.stderr
