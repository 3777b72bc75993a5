"""The Python API against the CLI on the same inputs: the same JSON documents, the same
refusals (with the keyword in place of the flag)."""
import json
import os
import subprocess
import sys
import tempfile

import pytest

import paraplan

BINARY = os.environ["PARAPLAN_BINARY"]
DATA = os.environ["PARAPLAN_DATA"]

# What describes the search's work rather than its answer: seconds, and counts that depend on
# how fast the parallel tasks tighten the shared bound.
WORK = {"seconds", "configurations_per_s", "stage_splits_searched", "evaluated",
        "rejected_out_of_memory", "planner_runs"}


def cli(*args):
    out = subprocess.run([BINARY, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def answer(document):
    """The document without the search's work figures."""
    if isinstance(document, dict):
        return {k: answer(v) for k, v in document.items() if k not in WORK}
    if isinstance(document, list):
        return [answer(v) for v in document]
    return document


def test_transformer_plan_equals_the_cli():
    ours = paraplan.plan(model="llama3-8b", cluster="dgx-h100", devices=16, batch=64, top=3,
                         resimulate=2)
    theirs = cli("plan", "--model", "llama3-8b", "--cluster", "dgx-h100", "--devices", "16",
                 "--batch", "64", "--top", "3", "--resimulate", "2", "--json", "--quiet")
    assert answer(ours) == answer(theirs)
    assert len(ours["top"]) == 3 and "simulated_iteration_time_s" in ours["top"][1]


def test_fixed_knobs_and_export():
    ours = paraplan.plan(model="llama3-8b", devices=16, batch=64, tp=2, recompute="selective",
                         zero=1, export="megatron")
    assert ours["config"]["tp"] == 2 and ours["config"]["zero"] == 1
    assert "--tensor-model-parallel-size 2" in ours["export"]
    # recompute as a number of layers: full recomputation of 2 layers per stage
    assert paraplan.plan(model="llama3-8b", devices=16, batch=64, recompute=2,
                         pp=2)["config"]["recompute"] == "2"


def test_evaluate_equals_the_cli():
    ours = paraplan.evaluate("gpt3-175b", devices=1024, tp=8, pp=16, batch=1536,
                             sequence_parallel=True)
    theirs = cli("evaluate", "--model", "gpt3-175b", "--devices", "1024", "--tp", "8", "--pp",
                 "16", "--batch", "1536", "--sequence-parallel", "--json")
    assert ours == theirs


def test_stack_keywords_equal_the_cli():
    ours = paraplan.evaluate("llama3-70b", cluster="dgx-h100", devices=64, tp=4, pp=4, cp=2,
                             vpp=5, batch=128, seq_len=8192, recompute="none",
                             sequence_parallel=True, zero=1, stack="megatron",
                             tp_comm_overlap=False, memory_headroom="5%", precision="fp8")
    theirs = cli("evaluate", "--model", "llama3-70b", "--cluster", "dgx-h100", "--devices", "64",
                 "--tp", "4", "--pp", "4", "--cp", "2", "--vpp", "5", "--batch", "128",
                 "--seq-len", "8192", "--recompute", "none", "--sequence-parallel", "--zero", "1",
                 "--stack", "megatron", "--no-tp-comm-overlap", "--memory-headroom", "5%",
                 "--precision", "fp8", "--json")
    assert ours == theirs
    assert ours["config"]["tp_comm_overlap"] is False
    assert ours["config"]["overlap_p2p_comm"] is True
    assert ours["config"]["precision"] == "fp8"
    fsdp = paraplan.evaluate("llama3-8b", devices=8, batch=16, stack="fsdp",
                             grad_reduce_dtype="bf16")
    assert fsdp["config"]["zero"] == 3 and fsdp["config"]["fused_elementwise"] is False
    with pytest.raises(paraplan.UsageError, match="stack"):
        paraplan.evaluate("llama3-8b", devices=8, stack="torch")


def test_pipeline_plan_equals_the_cli_file(tmp_path):
    path = os.path.join(DATA, "piper", "bert32a100.json")
    ours = paraplan.plan(input=path, devices=16, memory="8GiB")
    out = tmp_path / "plan.json"
    subprocess.run([BINARY, "plan", path, "--devices", "16", "--memory", "8GiB", "-o", str(out),
                    "--quiet"], check=True, capture_output=True)
    assert ours == json.loads(out.read_text())
    assert ours["planner"] == "pipeline" and ours["cost_model"] == "piper"


def test_placed_and_coarsened_pipeline_plans_equal_the_cli(tmp_path):
    path = os.path.join(DATA, "dapple", "amoeba-18-pbs-8.txt")
    flags = ["--cost-model", "piper", "--cluster", "pcie-2socket", "--devices", "8",
             "--microbatches", "32"]
    for keywords, extra in [({}, []), ({"placement": "rank-order"}, ["--placement", "rank-order"]),
                            ({"coarsen": 8}, ["--coarsen", "8"])]:
        ours = paraplan.plan(input=path, cost_model="piper", cluster="pcie-2socket", devices=8,
                             microbatches=32, **keywords)
        out = tmp_path / "plan.json"
        subprocess.run([BINARY, "plan", path, *flags, *extra, "-o", str(out), "--quiet"],
                       check=True, capture_output=True)
        assert ours == json.loads(out.read_text())
        assert ours["placement"]["cluster"] == "pcie-2socket"
        assert all(len(s["device_ids"]) == s["devices"] for s in ours["stages"])
    with pytest.raises(paraplan.UsageError, match="placement must be"):
        paraplan.plan(input=path, cost_model="piper", cluster="pcie-2socket", placement="best")


def test_mixed_cluster_plan_equals_the_cli(tmp_path):
    model = tmp_path / "builtin.json"  # the built-in layer model (A100 times)
    subprocess.run([BINARY, "convert", "-o", str(model)], check=True, capture_output=True)
    ours = paraplan.plan(input=str(model), cluster="mixed-a100-h100", devices=16)
    out = tmp_path / "plan.json"
    subprocess.run([BINARY, "plan", str(model), "--cluster", "mixed-a100-h100", "--devices", "16",
                    "-o", str(out), "--quiet"], check=True, capture_output=True)
    assert ours == json.loads(out.read_text())
    assert ours["device_groups"] == ["A100", "H100"]
    baselines = ours["mixed_baselines"]
    assert ours["objective"] < baselines["fastest_group_alone"] < baselines["blind_on_this_cluster"]
    alone = paraplan.plan(input=str(model), cluster="dgx-h100", devices=8, model_device="A100")
    assert alone["objective"] == baselines["fastest_group_alone"]


def test_mixed_transformer_plan_equals_the_cli():
    ours = paraplan.plan(model="gpt-7.5b", cluster="mixed-a100-h100", devices=16)
    theirs = cli("plan", "--model", "gpt-7.5b", "--cluster", "mixed-a100-h100", "--devices",
                 "16", "--json", "--quiet")
    assert answer(ours) == answer(theirs)
    assert ours["planner"] == "llm-mixed" and ours["answer"] == "mixed"
    types = {stage["device_type"] for stage in ours["mixed"]["stages"]}
    assert types == {"A100", "H100"}
    h100 = next(a for a in ours["alone"] if a["device_type"] == "H100")
    assert ours["iteration_time_s"] < h100["plan"]["iteration_time_s"]
    assert ours["iteration_time_s"] < ours["type_blind"]["iteration_time_s"]
    # the H100 alone is the homogeneous planner's answer on a DGX H100 node (of the same fabric)
    dgx = paraplan.plan(model="gpt-7.5b", cluster="dgx-h100-rails", devices=8, top=1)
    assert h100["plan"]["iteration_time_s"] == dgx["iteration_time_s"]
    with pytest.raises(paraplan.UsageError, match="tp: the planner of a cluster of several"):
        paraplan.plan(model="gpt-7.5b", cluster="mixed-a100-h100", devices=16, tp=2)
    with pytest.raises(paraplan.UsageError, match="model_device: the transformer planner takes"):
        paraplan.plan(model="gpt-7.5b", cluster="dgx-h100", devices=8, model_device="A100")


def test_dapple_plan_equals_the_cli():
    path = os.path.join(DATA, "dapple", "bert-24-pbs-6.txt")
    ours = paraplan.plan(input=path, machines="2x8")
    assert ours == cli("plan", path, "--machines", "2x8", "--json", "--quiet")
    assert ours["cost_model"] == "dapple"


def test_intra_op_plan_equals_the_cli():
    ours = paraplan.plan(model="alexnet", devices=4, flops="10TFLOP/s")
    assert ours == cli("plan", "--model", "alexnet", "--devices", "4", "--flops", "10TFLOP/s",
                       "--json", "--quiet")
    assert ours["planner"] == "intra-op"


def test_frontier_equals_the_cli():
    ours = paraplan.frontier("llama3-8b", devices=16, batch=64)
    theirs = cli("frontier", "--model", "llama3-8b", "--devices", "16", "--batch", "64",
                 "--json", "--quiet")
    assert answer(ours) == answer(theirs)


def test_intra_op_frontier_equals_the_cli():
    ours = paraplan.frontier("alexnet", devices=4, memory_step=0)
    assert ours == cli("frontier", "--model", "alexnet", "--devices", "4", "--memory-step", "0",
                       "--json", "--quiet")
    assert ours["planner"] == "intra-op" and ours["search"]["exact"]
    times = [p["step_time_s"] for p in ours["points"]]
    assert times == sorted(times) and len(times) > 2


def test_simulate_equals_the_cli(tmp_path):
    out = tmp_path / "p.json"
    subprocess.run([BINARY, "plan", "--model", "llama3-8b", "--devices", "16", "--batch", "64",
                    "-o", str(out), "--quiet"], check=True, capture_output=True)
    for schedule in (None, "gpipe"):
        args = ["simulate", str(out), "--json"] + (["--schedule", schedule] if schedule else [])
        assert paraplan.simulate(out, schedule=schedule) == cli(*args)


@pytest.mark.parametrize("call, error, message", [
    (lambda: paraplan.plan(model="no-such-model"), paraplan.UsageError,
     'model: "no-such-model" is not a built-in model or a file'),
    (lambda: paraplan.evaluate("no-such-model"), paraplan.UsageError,
     'model: "no-such-model" is not a built-in model or a file'),
    (lambda: paraplan.plan(model="llama3-8b", devices=16, tpp=2), paraplan.UsageError,
     "tpp does not apply to the transformer planner"),
    (lambda: paraplan.evaluate("llama3-8b", devices=24, tp=3), paraplan.UsageError,
     "tp 3: the 32 attention heads must be divisible by the tensor-parallel size"),
    (lambda: paraplan.plan(model="llama3-8b", devices=16, tp=3), paraplan.UsageError,
     "devices 16: not divisible by tp × cp × pp = 3 × 1 × 1 = 3"),
    (lambda: paraplan.evaluate("llama3-8b", devices=8, zero=3, export="megatron"),
     paraplan.UsageError, "zero 3: Megatron-LM shards at most to ZeRO 1"),
    (lambda: paraplan.plan(model="llama3-8b", devices="16"), paraplan.UsageError,
     "devices: expected an integer"),
    (lambda: paraplan.plan(model="llama3-8b", devices=16, recompute="some"),
     paraplan.UsageError, "recompute must be none, selective, full"),
    (lambda: paraplan.plan(input=os.path.join(DATA, "piper", "bert32a100.json"),
                           memory="1MiB"), paraplan.InfeasibleError, "no plan fits"),
    (lambda: paraplan.plan(input=os.path.join(DATA, "piper", "bert32a100.json"),
                           bandwidth="25"), paraplan.UsageError, "bandwidth 25: give the unit"),
    (lambda: paraplan.plan(input="/no/such/file.json"), paraplan.IoError, "/no/such/file.json"),
    (lambda: paraplan.evaluate("llama3-8b", devices=10, tp=4), paraplan.UsageError,
     "devices 10: not divisible by tp × cp × pp = 4 × 1 × 1 = 4"),
    (lambda: paraplan.simulate("/no/such/plan.json"), paraplan.IoError, "/no/such/plan.json"),
    (lambda: paraplan.plan(model="alexnet", input="net.onnx"), paraplan.UsageError,
     "model: give either it or an input, not both"),
])
def test_bad_input_raises_one_clear_error(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)
    assert isinstance(info.value, paraplan.Error)


def test_the_cli_says_the_same_with_its_flags():
    run = subprocess.run([BINARY, "evaluate", "--model", "llama3-8b", "--devices", "10", "--tp",
                          "4"], capture_output=True, text=True)
    assert run.returncode == 2
    with pytest.raises(paraplan.UsageError) as info:
        paraplan.evaluate("llama3-8b", devices=10, tp=4)
    assert run.stderr.strip() == "paraplan: --" + str(info.value)


def test_the_readme_example_runs(monkeypatch):
    root = os.path.dirname(DATA)
    text = open(os.path.join(root, "README.md"), encoding="utf-8").read()
    section = text.split("## From Python", 1)[1]
    code = section.split("```python", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(root)
    scope = {}
    exec(compile(code, "README.md", "exec"), scope)  # noqa: S102 - the project's own README
    assert scope["best"]["planner"] == "llm" and scope["points"]
    assert scope["pipeline"]["cost_model"] == "piper"


def test_plan_refuses_as_the_cli_does_in_its_words():
    """One dispatch: the same request refused the same way, each front end naming its field."""
    path = os.path.join(DATA, "piper", "bert32a100.json")
    run = subprocess.run([BINARY, "plan", path, "--machines", "2x8"], capture_output=True,
                         text=True)
    assert run.returncode == 2
    with pytest.raises(paraplan.UsageError) as info:
        paraplan.plan(input=path, machines="2x8")
    assert str(info.value).startswith("machines does not apply to the piper cost model")
    assert run.stderr.startswith("paraplan: --machines does not apply to the piper cost model")


def test_the_default_plan_equals_the_cli():
    """Without a model or an input both plan the built-in example."""
    ours = paraplan.plan(top=1)
    assert answer(ours) == answer(cli("plan", "--top", "1", "--json", "--quiet"))
    assert ours["model"] == "llama3-70b"


def test_inspect_equals_the_cli():
    for model in ("llama3-8b", "alexnet"):
        assert paraplan.inspect(model) == cli("inspect", "--model", model, "--json")
    with pytest.raises(paraplan.UsageError, match="model: \"nope\" is not a built-in model or a file"):
        paraplan.inspect("nope")


def test_schedule_of_refuses_what_is_not_a_pipeline_plan(tmp_path):
    out = tmp_path / "llm.json"
    subprocess.run([BINARY, "plan", "--model", "llama3-8b", "--devices", "8", "--batch", "16",
                    "-o", str(out), "--quiet"], check=True, capture_output=True)
    with pytest.raises(paraplan.InputError, match="not a pipeline plan under Piper's cost model"):
        paraplan.schedule_of(out)
    path = os.path.join(DATA, "piper", "bert32a100.json")
    plan = tmp_path / "pipeline.json"
    subprocess.run([BINARY, "plan", path, "--devices", "8", "--memory", "8GiB", "-o", str(plan),
                    "--quiet"], check=True, capture_output=True)
    with pytest.raises(paraplan.UsageError, match="schedule zero-bubble"):
        paraplan.schedule_of(plan, schedule="zero-bubble")
    schedule = paraplan.schedule_of(plan)
    assert schedule["format"] == "paraplan-schedule" and schedule["stages"]


def test_a_layer_model_file_given_first_is_the_input(tmp_path):
    path = os.path.join(DATA, "piper", "bert32a100.json")
    assert paraplan.plan(path, devices=4) == paraplan.plan(input=path, devices=4)
    assert paraplan.frontier(path, devices=4) == paraplan.frontier(None, input=path, devices=4)
    # A Hugging Face config.json is still a transformer.
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"model_type": "llama", "hidden_size": 2048,
                                  "num_hidden_layers": 16, "num_attention_heads": 16,
                                  "intermediate_size": 8192, "vocab_size": 32000}))
    assert paraplan.plan(str(config), devices=8, batch=64)["planner"] == "llm"


def test_the_pipeline_planner_takes_dp_as_the_cli_does(tmp_path):
    path = os.path.join(DATA, "piper", "bert32a100.json")
    ours = paraplan.plan(path, devices=8, dp=2)
    out = tmp_path / "plan.json"
    subprocess.run([BINARY, "plan", path, "--devices", "8", "--dp", "2", "-o", str(out),
                    "--quiet"], check=True, capture_output=True)
    assert ours == json.loads(out.read_text())
    assert {stage["data_parallel"] for stage in ours["stages"]} == {2}


def test_the_pipeline_objective_and_stage_count_equal_the_cli(tmp_path):
    path = os.path.join(DATA, "dapple", "amoeba-18-pbs-8.txt")
    for keywords, flags in [({}, []), ({"objective": "steady-state"},
                                       ["--objective", "steady-state"]),
                            ({"pp": 2}, ["--pp", "2"])]:
        ours = paraplan.plan(path, cost_model="piper", devices=8, microbatches=32, **keywords)
        out = tmp_path / "plan.json"
        subprocess.run([BINARY, "plan", path, "--cost-model", "piper", "--devices", "8",
                        "--microbatches", "32", *flags, "-o", str(out), "--quiet"], check=True,
                       capture_output=True)
        assert ours == json.loads(out.read_text())
    assert ours["search_objective"] == "iteration" and len(ours["stages"]) == 2
    with pytest.raises(paraplan.UsageError, match="objective"):
        paraplan.plan(path, cost_model="piper", objective="fastest")


def test_evaluate_from_a_megatron_launch_equals_the_cli():
    example = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "examples",
                           "megatron_llama3_8b.sh")
    ours = paraplan.evaluate(from_=("megatron", example), cluster="dgx-h100")
    theirs = cli("evaluate", "--from", "megatron", example, "--cluster", "dgx-h100", "--json")
    assert ours == theirs
    assert ours["speedup"] >= 1 and ours["diff"]
    with pytest.raises(paraplan.UsageError):
        paraplan.evaluate(from_="megatron")


def test_plan_from_a_nemo_recipe_equals_the_cli():
    recipe = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "examples",
                          "nemo_llama3_8b.yaml")
    ours = paraplan.plan(from_=("nemo", recipe), cluster="dgx-h100")
    assert ours == cli("plan", "--from", "nemo", recipe, "--cluster", "dgx-h100", "--json")
    assert ours["best"]["iteration_time_s"] <= ours["as_is"]["iteration_time_s"]
    assert all(line.startswith(("- model.", "+ model.")) for line in ours["diff"])


def test_evaluate_from_a_torchtitan_job_and_its_export_equal_the_cli():
    job = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "examples",
                       "torchtitan_llama3_8b.toml")
    ours = paraplan.evaluate(from_=("torchtitan", job), cluster="dgx-h100")
    assert ours == cli("evaluate", "--from", "torchtitan", job, "--cluster", "dgx-h100", "--json")
    assert ours["speedup"] > 1
    assert all(line.startswith(("- ", "+ ")) and " = " in line for line in ours["diff"])
    planned = paraplan.plan(from_=("torchtitan", job), cluster="dgx-h100", export="torchtitan")
    assert "[parallelism]" in planned["export"]


def test_evaluate_from_a_deepspeed_config_and_its_export_read_back():
    config = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "examples",
                          "deepspeed_llama3_8b.json")
    ours = paraplan.evaluate(from_=("deepspeed", config), model="llama3-8b", seq_len=8192,
                             cluster="dgx-h100")
    assert ours == cli("evaluate", "--from", "deepspeed", config, "--model", "llama3-8b",
                       "--seq-len", "8192", "--cluster", "dgx-h100", "--json")
    assert ours["speedup"] > 1 and ours["diff"]
    # Megatron-DeepSpeed's launch script, exported and read back: the same plan and time.
    planned = paraplan.plan(model="llama3-8b", cluster="dgx-h100", devices=64, batch=512,
                            seq_len=8192, export="deepspeed")
    script = planned["export"]
    assert script.startswith("#") and "--deepspeed_config ds_config.json" in script
    with tempfile.NamedTemporaryFile("w", suffix=".sh", delete=False) as f:
        f.write(script)
    back = paraplan.evaluate(from_=("deepspeed", f.name), cluster="dgx-h100")
    os.unlink(f.name)
    assert back["as_is"]["config"] == planned["config"]
    assert back["as_is"]["iteration_time_s"] == pytest.approx(planned["iteration_time_s"])


def test_every_error_is_a_paraplan_error_and_the_namespace_is_clean():
    from paraplan.probe import ProbeError
    from paraplan.profiler import ProfileError
    from paraplan.ranks import RunError
    for error in (ProfileError, ProbeError, RunError):
        assert issubclass(error, paraplan.Error), error.__name__
    assert not {"json", "os"} & set(vars(paraplan)), "modules leak into the package namespace"


@pytest.mark.parametrize("command", [["profile", "paraplan.models:gpt", "--input-shape", "2,16"],
                                     ["probe", "--nproc", "2"]])
def test_an_output_path_that_cannot_be_written_is_refused_before_any_work(command, tmp_path):
    import time
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-m", "paraplan", *command, "-o",
                             str(tmp_path / "no-such-folder" / "x.json")],
                            capture_output=True, text=True)
    assert result.returncode == 5, result.stderr
    assert "no-such-folder/x.json: No such directory" in result.stderr
    assert time.monotonic() - start < 10  # no measuring, no torch.distributed start


def test_how_many_gpus_for_tokens_in_days():
    """The question before buying, from Python: the fewest H100 for Llama 3 70B on 15T tokens in
    90 days, and the run's cost at a price per GPU-hour."""
    answer = paraplan.plan(model="llama3-70b", cluster="dgx-h100", seq_len=8192, batch=2048,
                           train_tokens="15T", days=90, gpu_hour_price=2.5)
    sizing = answer["sizing"]["answer"]
    assert sizing["devices"] == answer["config"]["devices"]
    assert answer["tokens_per_s"] >= 15e12 / (90 * 86400)
    assert sizing["cost"] == pytest.approx(2.5 * sizing["device_hours"])
    with pytest.raises(paraplan.UsageError, match="days"):
        paraplan.plan(model="llama3-70b", cluster="dgx-h100", train_tokens=15e12)
