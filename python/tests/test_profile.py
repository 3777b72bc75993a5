"""Profiles of real PyTorch models: their structure (layers, edges, parameter totals equal to
sum(p.numel()) × bytes), the round trip to a plan, and the refusals."""
import json
import os
import subprocess
import sys
import time
import warnings

import pytest
import torch
import torchvision

import paraplan
from paraplan.models import gpt

BINARY = os.environ["PARAPLAN_BINARY"]
QUICK = {"warmup": 0, "repeats": 1, "min_seconds": 0}


def parameter_bytes(document):
    return sum(layer["options"]["1"][0]["parameter_bytes"] for layer in document["layers"])


def module_bytes(module):
    return sum(p.numel() * p.element_size() for p in module.parameters())


def check_document(document, module, example):
    ids = [layer["id"] for layer in document["layers"]]
    assert ids == list(range(len(ids)))
    for edge in document["edges"]:
        assert edge["from"] < edge["to"] and edge["bytes"] > 0  # a DAG in profile order
    assert parameter_bytes(document) == module_bytes(module)
    for layer in document["layers"]:
        for option in layer["options"]["1"]:
            assert 0 <= option["forward_time_s"] <= option["compute_time_s"]
            loss = 0
            if layer is document["layers"][-1]:  # the loss's log-softmax and its two gradients
                with torch.no_grad():
                    loss = 3 * 4 * module(example).numel()
            assert option["memory_fixed_bytes"] == 4 * option["parameter_bytes"] + loss


@pytest.mark.parametrize("factory, shape, layers", [
    (torchvision.models.resnet50, (2, 3, 64, 64), 22),   # stem 4, 16 bottlenecks, pool, fc
    (torchvision.models.vgg16, (2, 3, 32, 32), 39),      # 31 features, pool, 7 classifier
    (torchvision.models.mobilenet_v2, (2, 3, 64, 64), 21),  # 19 features, 2 classifier
])
def test_torchvision_models(factory, shape, layers):
    torch.manual_seed(0)
    module = factory()
    example = torch.randn(shape)
    document = paraplan.profile(module, example, **QUICK)
    assert len(document["layers"]) == layers
    assert len(document["edges"]) == layers - 1  # grouped by block, the graph is a chain
    assert document["profile_batch_size"] == shape[0]
    check_document(document, module, example)


def test_gpt_is_grouped_by_block():
    module = gpt(layers=3, hidden=64, heads=4, seq_len=32, vocab=128)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # traced by torch.fx, not by the hook fallback
        example = torch.randint(0, 128, (2, 32))
        document = paraplan.profile(module, example, **QUICK)
    names = [layer["name"] for layer in document["layers"]]
    for block in ("blocks.0", "blocks.1", "blocks.2", "embed", "head"):
        assert block in names
    check_document(document, module, example)
    # The head's output waits for its loss: its fp32 logits (2 × 32 × 128) are held per micro-batch.
    head = document["layers"][names.index("head")]["options"]["1"][0]
    assert head["memory_per_inflight_bytes"] >= 2 * 32 * 128 * 4
    # A block keeps its attention scores and MLP activations: recomputing it saves memory.
    block = document["layers"][names.index("blocks.1")]["options"]["1"]
    assert [o["id"] for o in block] == ["vanilla", "recompute"]
    assert block[1]["memory_per_inflight_bytes"] < block[0]["memory_per_inflight_bytes"]


def test_profile_to_plan_round_trip(tmp_path):
    path = tmp_path / "resnet50.json"
    run = subprocess.run([sys.executable, "-m", "paraplan", "profile",
                          "torchvision.models:resnet50", "--input-shape", "2,3,64,64",
                          "--repeats", "1", "--warmup", "0", "--min-seconds", "0",
                          "-o", str(path)],
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "22 layers" in run.stdout
    cli = subprocess.run([BINARY, "plan", str(path), "--devices", "4", "--memory", "8GiB",
                          "--json", "--quiet"], capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    plan = json.loads(cli.stdout)
    assert plan["feasible"] and plan["planner"] == "pipeline"
    assert paraplan.plan(input=str(path), devices=4, memory="8GiB")["objective"] == \
        plan["objective"]


def test_pipedream_text_and_check(tmp_path):
    """The GPT's profile as PipeDream text, read back by DAPPLE's planner; --check times whole
    passes of the unsplit module between the profile's own."""
    model, text = tmp_path / "gpt.json", tmp_path / "gpt.txt"
    run = subprocess.run([sys.executable, "-m", "paraplan", "profile", "paraplan.models:gpt",
                          "--arg", "layers=2", "--arg", "hidden=64", "--arg", "seq_len=32",
                          "--arg", "vocab=128", "--input-shape", "4,32", "--tokens", "128",
                          "--repeats", "1", "--warmup", "0", "--min-seconds", "0", "--check",
                          "-o", str(model),
                          "--pipedream", str(text)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "a whole forward and backward pass measures" in run.stdout
    document = json.loads(model.read_text())
    lines = text.read_text().splitlines()
    nodes = [line for line in lines if not line.startswith("\t")]
    assert len(nodes) == len(document["layers"])
    assert len(lines) - len(nodes) == len(document["edges"])
    first = document["layers"][0]["options"]["1"][0]
    assert nodes[0].startswith(f"node1 -- {document['layers'][0]['name']} -- "
                               f"forward_compute_time={1000 * first['forward_time_s']:.6f}, ")
    cli = subprocess.run([BINARY, "plan", str(text), "--machines", "1x2", "--batch", "8",
                          "--profile-batch", "4", "--json", "--quiet"],
                         capture_output=True, text=True)
    assert cli.returncode == 0, cli.stderr
    assert json.loads(cli.stdout)["cost_model"] == "dapple"


def test_untraceable_module_falls_back_to_hooks_and_says_so():
    class Branchy(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(8, 8)
            self.b = torch.nn.Linear(8, 4)

        def forward(self, x):
            if x.sum() > 0:  # data-dependent control flow: torch.fx cannot trace it
                x = x * 2
            return self.b(self.a(x))

    with pytest.warns(UserWarning, match="torch.fx cannot trace Branchy"):
        document = paraplan.profile(Branchy(), torch.randn(4, 8), granularity=1, **QUICK)
    assert [layer["name"] for layer in document["layers"]] == ["a", "b"]
    assert document["edges"] == [{"from": 0, "to": 1, "bytes": 4 * 8 * 4}]


@pytest.mark.parametrize("args, code, message", [
    (["no_such_package.models:net", "--input-shape", "2,3"], 2, "cannot import"),
    (["torchvision.models:no_such_net", "--input-shape", "2,3"], 2, "has no no_such_net"),
    (["torchvision.models", "--input-shape", "2,3"], 2, "expected package.module:factory"),
    (["torchvision.models:resnet18", "--input-shape", "2,x"], 2, "--input-shape 2,x"),
    (["torchvision.models:resnet18", "--input-shape", "2,5"], 3,
     "does not run on the example inputs ((2, 5))"),
    (["torchvision.models:resnet18", "--input-shape", "2,3", "--device", "tpu"], 2,
     "--device tpu"),
    (["torchvision.models:resnet18", "--input-shape", "2,3", "--device", "cuda:99"], 2,
     "expected cpu, cuda or cuda:N of a visible GPU"),
])
def test_bad_input_gives_one_clear_message(args, code, message, tmp_path):
    run = subprocess.run([sys.executable, "-m", "paraplan", "profile", *args, "-o",
                          str(tmp_path / "m.json")], capture_output=True, text=True)
    assert run.returncode == code
    assert message in run.stderr
    assert "Traceback" not in run.stderr


def test_the_clock_times_the_work_on_its_device():
    """On the CPU a stamp is the host's clock; the profiler's times come from the same clock on
    every device (on a GPU, CUDA events: the host's clock would time kernel launches)."""
    from paraplan.graphs import Clock, device_of, median_time
    clock = Clock(device_of(torch.nn.Linear(2, 2)))
    assert not clock.cuda
    start = clock.now()
    time.sleep(0.01)
    clock.settle()
    assert clock.seconds(start, clock.now()) >= 0.01
    assert median_time(lambda: time.sleep(0.002), 0, 3, torch.device("cpu")) >= 0.002
