"""Advice read from runs too short to measure the step's terms (``bench.support``: few
steps timed) names no change to make from them: a user's 2-step quickstart was told to
cut DDP's overhead (gradient_as_bucket_view, fewer parameters) from a term ~20x what a
longer run of the same model measured. It says to measure first, with a run the file does
not hold: its device counts again, with more steps than any of its runs timed; in the
explanation, the JSON (``recommendation.measure_first``) and the Python API alike. The
same runs timed long enough are told what would help."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gpuscale
from gpuscale.advice.explain.answer import remedy
from gpuscale.advice.explain.as_json import advice_document
from gpuscale.bench.results import bench_table

from ..golden import Golden

VIEW = "advice/weak_runs"
WEAK = Path(__file__).with_name("cpu_tiny_model_gloo.jsonl")  # 5 steps a run on 2 cores


def _records(steps: int | None = None) -> list[dict]:
    records = [json.loads(line) for line in WEAK.read_text().splitlines() if line.strip()]
    for record in records if steps else []:
        record["config"]["steps"] = steps  # the same step times, timed `steps` times
        record["key"] = re.sub(r"steps=\d+", f"steps={steps}", record["key"])
    return records


def _recommended(advice: gpuscale.Advice) -> list[str]:
    """The sentences that name a change to make: the cure ``advice.focus.remedy`` finds for
    the decision's largest term, or any cure said to help most."""
    cure = remedy(advice)
    return [s for s in advice.explanation if cure in s or "would help most" in s]


def test_weak_runs_name_no_change_and_say_what_to_measure_first(golden: Golden) -> None:
    table = bench_table(_records())
    assert (table["evidence_notes"].str.contains("timed \\(under")).all()  # the premise
    advice = gpuscale.advise(bench=table)
    assert not _recommended(advice), _recommended(advice)
    change = [s for s in advice.explanation if s.startswith("What would change it")]
    assert change and "these runs" in change[0]
    golden.check(VIEW, "weak runs: no change named", change[0])
    said = advice_document(advice)["recommendation"]
    assert said["terms_evidence"] == "weak"  # the JSON's dominant_term is marked
    first = said["measure_first"]
    assert first and first == advice.decision.settle
    assert f"Measure first: {first}." in advice.explanation
    (command,) = re.findall(r"`(gpuscale bench [^`]*)`", first)
    counts = sorted(int(n) for n in table["accelerators"].unique())
    assert f"--nproc {','.join(map(str, counts))}" in command  # the counts the file holds
    (steps,) = (int(n) for n in re.findall(r"--steps (\d+)", command))
    assert steps > table["steps"].max()  # a run the file does not hold


def test_the_same_runs_timed_long_enough_are_told_what_would_help(golden: Golden) -> None:
    table = bench_table(_records(steps=2000))
    assert not table["evidence_notes"].str.contains("timed \\(under").any()  # the premise
    advice = gpuscale.advise(bench=table)
    change = [s for s in advice.explanation if s.startswith("What would change it")]
    assert change and "these runs" not in change[0]
    golden.check(VIEW, "the runs timed long: what would help", change[0])
    assert _recommended(advice)
    assert advice_document(advice)["recommendation"]["terms_evidence"] == "firm"
