"""``docs/plan-accuracy.md`` quotes ``benchmarks/results/plan_accuracy.json``: the
accuracy table in the docs is the one the benchmark wrote, never prose numbers."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "benchmarks" / "results" / "plan_accuracy.json"
BEGIN, END = "<!-- plan_accuracy.json: begin -->\n", "<!-- plan_accuracy.json: end -->"


def _benchmark():
    spec = importlib.util.spec_from_file_location(
        "plan_accuracy", ROOT / "benchmarks/plan_accuracy.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_table_is_the_files() -> None:
    results = json.loads(RESULTS.read_text())
    doc = (ROOT / "docs" / "plan-accuracy.md").read_text()
    quoted = doc.split(BEGIN)[1].split(END)[0]
    assert quoted == _benchmark().markdown(results)
    begin, end = (x.replace("json:", "json by_round:") for x in (BEGIN, END))
    assert doc.split(begin)[1].split(end)[0] == _benchmark().markdown_rounds(results)


def test_the_file_scores_every_class_against_the_baselines() -> None:
    results = json.loads(RESULTS.read_text())
    classes = results["classes"]
    assert set(classes) >= {"i", "ii_in", "ii_out", "iii", "none", "new workload"}
    measured = classes["i"]
    # at a measured count the plan is no worse than the newest measurement there
    assert measured["plan"]["median_error_pct"] <= measured["lookup"]["median_error_pct"]
    for key in ("ii_in", "ii_out"):  # where nothing was measured, the model adds value
        row = classes[key]
        assert row["plan"]["median_error_pct"] <= 0.7 * row["lookup"]["median_error_pct"]
        assert row["plan"]["median_error_pct"] <= row["linear"]["median_error_pct"]
    assert all(isinstance(g["met"], bool) for g in results["goals"].values())


def test_every_class_with_ten_forecasts_is_covered_70_to_90_pct() -> None:
    classes = json.loads(RESULTS.read_text())["classes"]
    covered = {
        key: classes[key]["coverage_pct"]
        for key in ("i", "ii_in", "ii_out", "iii")
        if classes[key]["cases"] >= 10
    }
    assert len(covered) == 4  # every class has ten forecasts or more
    assert all(70 <= pct <= 90 for pct in covered.values()), covered


def test_the_readmes_plan_figures_are_the_files() -> None:
    """Every percentage in the README's plan row is one of the file's figures (to its
    one decimal): never a number from an earlier run."""
    import re

    results = json.loads(RESULTS.read_text())
    figures = set()
    for row in results["classes"].values():
        for method in ("plan", "lookup", "linear"):
            if row.get(method):
                figures |= {round(v, 1) for v in row[method].values()}
        if row.get("coverage_pct") is not None:
            figures.add(round(row["coverage_pct"], 1))
    figures |= {g["calibrated_pct"] for g in results["goals"].values() if "calibrated_pct" in g}
    readme = (ROOT / "README.md").read_text()
    (line,) = [x for x in readme.splitlines() if x.startswith("| Plan from MLPerf")]
    quoted = [float(v) for v in re.findall(r"(\d+\.\d)%", line)]
    assert len(quoted) >= 8
    assert set(quoted) <= figures, set(quoted) - figures
    # each coverage is quoted with its forecasts, and none of a class with fewer than 10
    said = dict((float(p), int(n)) for p, n in re.findall(r"(\d+\.\d)% of (\d+)", line))
    # each class's (the pooled row may share a class's percentage: 86.4% of 516 and of 22)
    for row in (v for k, v in results["classes"].items() if k != "all planned"):
        if row.get("coverage_pct") is not None and round(row["coverage_pct"], 1) in said:
            assert said[round(row["coverage_pct"], 1)] == row["cases"] >= 10
    # a family's first results on a workload (class iii) are said as such: never as "new
    # workloads", the class of a workload's first round, which the plan refuses
    first = results["classes"]["iii"]["plan"]["median_error_pct"]
    assert f"{first:.1f}% for an accelerator running a workload for the first time" in line
    assert results["classes"]["new workload"]["plan"] is None and "new workload" not in line


def test_a_class_of_few_forecasts_gets_no_percentage() -> None:
    """The docs' table says "fewer than 10 forecasts" where a class has so few, never a
    percentage."""
    module = _benchmark()
    row = {"class": "x", "cases": 7, "coverage_pct": 71.4, "plan": None}
    assert module.coverage_cell(row) == "fewer than 10 forecasts"
    assert module.coverage_cell(row | {"cases": 10}) == "71.4%"


def test_the_file_says_coverage_by_forecast_round() -> None:
    """Per class and forecast round: the cases, how many the intervals covered and how
    many forecasts of the rounds before calibrated them (none for the first transition,
    where a family's first results rest on the prior alone: said apart in the goals)."""
    results = json.loads(RESULTS.read_text())
    for key in ("i", "ii_in", "ii_out", "iii"):
        row = results["classes"][key]
        rounds = list(row["by_round"].values())
        assert sum(r["cases"] for r in rounds) == row["cases"]
        covered = sum(r["covered"] for r in rounds)
        assert round(100 * covered / row["cases"], 1) == row["coverage_pct"]
        assert rounds[0]["earlier"] == 0 and all(r["earlier"] > 0 for r in rounds[1:])
    first = results["classes"]["iii"]["by_round"]["v3.1"]
    assert first["earlier"] == 0 and first["cases"] == 5
    goal = results["goals"][
        "a family's first results: it never ran the workload: 80% intervals cover 70-90%"
    ]
    assert goal["forecasts"] == 15 and goal["met"]


def test_the_docs_borrowing_table_is_the_files() -> None:
    """What the training rounds say of a borrowed level (``benchmarks/plan_borrowing.py``)
    is quoted from its file, beside the forward class (iii) forecasts it is set against:
    the same rounds and cases as ``plan_accuracy.json``'s."""
    path = ROOT / "benchmarks" / "plan_borrowing.py"
    spec = importlib.util.spec_from_file_location("plan_borrowing", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    borrowing = json.loads(module.RESULTS.read_text())
    doc = (ROOT / "docs" / "plan-accuracy.md").read_text()
    begin, end = (x.replace("plan_accuracy", "plan_borrowing") for x in (BEGIN, END))
    assert doc.split(begin)[1].split(end)[0] == module.markdown(borrowing)
    rounds = json.loads(RESULTS.read_text())["classes"]["iii"]["by_round"]
    transitions = borrowing["transitions"]
    assert list(transitions) == list(rounds)
    for name, row in transitions.items():
        assert row["forward"]["cases"] == rounds[name]["cases"]
        seen = row["in_sample"]
        assert 0 < seen["pairs"] <= seen["systems"] and 0 <= seen["under"] <= seen["systems"]
        assert seen["width_80"] > 0


def test_the_docs_interval_rules_tables_are_the_files() -> None:
    """The class (iii) forecasts and the coverage under each rule of sizing a width
    (``benchmarks/plan_interval_rules.py``) are quoted from its file; its plan's rule
    scores the same class (iii) forecasts as ``plan_accuracy.json``."""
    path = ROOT / "benchmarks" / "plan_interval_rules.py"
    spec = importlib.util.spec_from_file_location("plan_interval_rules", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rules = json.loads(module.RESULTS.read_text())
    doc = (ROOT / "docs" / "plan-accuracy.md").read_text()
    begin, end = (x.replace("plan_accuracy", "plan_interval_rules") for x in (BEGIN, END))
    assert doc.split(begin)[1].split(end)[0] == module.markdown(rules)
    first = (x.replace("json:", "json first:") for x in (begin, end))
    begin, end = first
    assert doc.split(begin)[1].split(end)[0] == module.markdown_first(rules)
    accuracy = json.loads(RESULTS.read_text())["classes"]
    for kind, row in rules["rules"]["pooled"].items():
        assert row["cases"] == accuracy[kind]["cases"]
        assert round(100 * row["covered"] / row["cases"], 1) == accuracy[kind]["coverage_pct"]
    missed = [r for r in rules["first_results"] if r["error_per_half_width"] > 1]
    assert (
        len(missed)
        == rules["rules"]["pooled"]["iii"]["cases"] - rules["rules"]["pooled"]["iii"]["covered"]
    )
    # with 15 forecasts, 75-85% is 12 covered exactly: calibrated intervals, 1 time in 4
    assert rules["in_band"]["iii"] == round(module.in_band(15), 3) < 0.3


def test_the_docs_first_forecasts_of_v31_are_the_files() -> None:
    """The sentence on v3.1's first results says how far under the times measured the plan
    was (a log error ``e`` is ``1 - exp(e)`` under), each rounded alike from the file:
    the range of those inside their interval and the one outside."""
    import math

    path = ROOT / "benchmarks" / "results" / "plan_interval_rules.json"
    first = [r for r in json.loads(path.read_text())["first_results"] if r["round"] == "v3.1"]
    under = [(round(100 * (1 - math.exp(r["log_error"]))), r) for r in first]
    inside = sorted(pct for pct, r in under if r["error_per_half_width"] <= 1)
    (outside,) = [(pct, r) for pct, r in under if r["error_per_half_width"] > 1]
    words = {4: "four", 5: "five"}
    said = (
        f"{words[len(inside)]} of the {words[len(first)]} are inside it, the plan "
        f"{inside[0]}% to {inside[-1]}% under the times measured, and DLRM on "
        f"{outside[1]['accelerators']} H100 PCIe cards ({outside[0]}% under) outside"
    )
    assert outside[1]["family"] == "H100-PCIe-80GB" and outside[1]["workload"] == "dlrm_dcnv2"
    doc = " ".join((ROOT / "docs" / "plan-accuracy.md").read_text().split())
    assert said in doc, said
