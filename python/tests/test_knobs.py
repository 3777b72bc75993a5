"""The knob table walked through Python: every keyword takes the range and choices the CLI's flag
takes (the C++ test KnobTable.* walks the CLI, the plan file and the engines)."""

import pytest

import paraplan

BASE = {"cluster": "dgx-a100", "devices": 16, "batch": 64}


def test_the_table_lists_every_knob_once_with_its_names():
    rows = paraplan.knobs()
    keywords = [r["keyword"] for r in rows]
    assert len(keywords) == len(set(keywords))
    for r in rows:
        assert r["flag"] == "--" + r["keyword"].replace("_", "-")
    assert {"tp", "pp", "micro_batch", "compile", "zero"} <= set(keywords)


@pytest.mark.parametrize("row", [r for r in paraplan.knobs()
                                 if r["type"] == "integer" and r["keyword"] not in ("devices",
                                                                                      "batch")],
                         ids=lambda r: r["keyword"])
def test_every_integer_keyword_is_refused_outside_its_range_by_name(row):
    for wrong in (int(row["min"]) - 1, int(row["max"]) + 1):
        with pytest.raises(paraplan.UsageError, match=row["keyword"]):
            paraplan.evaluate("gpt-1.7b", **BASE, **{row["keyword"]: wrong})


@pytest.mark.parametrize("row", [r for r in paraplan.knobs() if r["type"] == "choice"],
                         ids=lambda r: r["keyword"])
def test_every_choice_keyword_is_refused_outside_its_choices_by_name(row):
    with pytest.raises(paraplan.UsageError, match=row["keyword"]):
        paraplan.evaluate("gpt-1.7b", **BASE, **{row["keyword"]: "no-such-choice"})


def test_a_knob_is_refused_on_a_stack_it_does_not_apply_to():
    with pytest.raises(paraplan.UsageError, match="compile: applies to the fsdp stack only"):
        paraplan.evaluate("gpt-1.7b", **BASE, compile=True)
    fused = paraplan.evaluate("gpt-1.7b", **BASE, stack="fsdp", compile=True)
    eager = paraplan.evaluate("gpt-1.7b", **BASE, stack="fsdp")
    assert fused["iteration_time_s"] < eager["iteration_time_s"]
