"""--allow-flagged admits a run flagged ``samples under batch`` (its step's global batch
repeats samples, so its samples/s count the repeats): the warning says so of those runs,
and the advice's record carries the flag kinds it admitted (``Runs.allowed_flags``,
``-f json``'s ``recommendation.allowed_flags``). The flag's own remedy is part of its
reason, never counted as a second flag."""

from __future__ import annotations

import json
from pathlib import Path

import gpuscale
from gpuscale.advice.explain.as_json import advice_document
from gpuscale.advice.explain.phrasebook import said as in_words
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.plausibility import FlagKind

from ..builders import one_and_two

REPEATS = FlagKind.SAMPLES_UNDER_BATCH.value
BUSY = ["machine busy: other processes used 60% of its CPU time during the timed steps"]


def _file(tmp_path: Path, two: dict) -> Path:
    path = tmp_path / "results.jsonl"
    rows = one_and_two("mlp-4m", 4_000_000, two=two)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _used(advice: gpuscale.Advice) -> tuple[str, Finding]:
    """The --allow-flagged warning in words, and its finding on the flagged runs used."""
    (warning,) = [
        w for w in advice.calibration.said.warnings if w.kind == FindingKind.ALLOWED_FLAGGED
    ]
    (used,) = [p for p in warning["parts"] if p.kind == FindingKind.FLAGGED_USED]
    return in_words(warning), used


def test_admitted_repeated_samples_are_said_and_recorded(tmp_path: Path) -> None:
    # the N = 2 run's global batch of 16 drawn from 8 samples (a dataset of 8)
    path = _file(tmp_path, {"data": {"samples_drawn": 16, "samples_distinct": 8}})
    advice = gpuscale.advise(bench=path, link="pcie4-x16", allow_flagged=True)
    assert advice.calibration.runs.allowed_flags == (REPEATS,)
    assert advice_document(advice)["recommendation"]["allowed_flags"] == [REPEATS]
    words, used = _used(advice)
    assert used["n"] == 1 and used["repeats"] == 1
    # one kind of flag: its remedy ("give it more samples...") is no flag of its own
    assert [f["flag"] for f in used["flags"]] == [REPEATS] and used["several"] is None
    # named as the flag's kind, then as the runs whose samples/s count repeats
    assert words.count(REPEATS) == 2
    clause = words.split("less certain", 1)[1]
    assert REPEATS in clause and "samples/s" in clause and "repeated" in clause
    # not admitted: no kind recorded, the run left out
    plain = gpuscale.advise(bench=path, link="pcie4-x16")
    assert plain.calibration.runs.allowed_flags == ()
    assert advice_document(plain)["recommendation"]["allowed_flags"] == []


def test_other_flags_admitted_say_no_repeats(tmp_path: Path) -> None:
    path = _file(tmp_path, {"flags": BUSY})
    advice = gpuscale.advise(bench=path, link="pcie4-x16", allow_flagged=True)
    assert advice.calibration.runs.allowed_flags == (FlagKind.BUSY.value,)
    words, used = _used(advice)
    assert used["repeats"] is None and REPEATS not in words
