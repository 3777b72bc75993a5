"""The cluster probe: two gloo ranks on this machine measured into a cluster file that paraplan
reads."""
import json
import os
import subprocess
import sys

BINARY = os.environ["PARAPLAN_BINARY"]


def test_probe_writes_a_cluster_paraplan_reads(tmp_path):
    path = tmp_path / "cluster.json"
    # Messages up to 16 MiB: their times grow well beyond the noise of a loaded machine (with
    # 4 MiB at most, three repeats on a machine busy compiling once fitted a falling line).
    run = subprocess.run([sys.executable, "-m", "paraplan", "probe", "--nproc", "2", "--sizes",
                          "65536,4194304,16777216", "--repeats", "5", "-o", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "fitted link" in run.stdout
    cluster = json.loads(path.read_text())
    assert cluster["format"] == "paraplan-cluster"
    assert cluster["machines"] == [{"devices": 2, "device_type": cluster["device_types"][0]["name"]}]
    tier = cluster["tiers"][0]
    assert tier["bandwidth_bytes_per_s"] > 0 and tier["latency_s"] >= 0
    assert cluster["device_types"][0]["peak_flops_per_s"] > 0
    # The planner reads it (the built-in layer model may not fit in its memory: exit 4, not 3).
    plan = subprocess.run([BINARY, "plan", "--planner", "pipeline", "--cluster", str(path),
                           "--quiet"], capture_output=True, text=True)
    assert plan.returncode in (0, 4), plan.stderr


def test_probe_refuses_one_rank(tmp_path):
    run = subprocess.run([sys.executable, "-m", "paraplan", "probe", "--nproc", "1", "-o",
                          str(tmp_path / "c.json")], capture_output=True, text=True)
    assert run.returncode == 2
    assert "at least 2 ranks" in run.stderr and "Traceback" not in run.stderr
