"""One meaning per ``-f json`` key: in every ``advise --bench ... -f json`` of the repo's bench
files, a key named ``trusted_runs`` holds unflagged runs' speedups only; the runs a
disagreement's median is of (every run where all are flagged) are ``evidence.runs_used``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app

TESTS = Path(__file__).parents[1]
BENCHES = sorted([*TESTS.glob("advice/*.jsonl"), *TESTS.glob("report/*.jsonl")])


def _keyed(found: object, key: str) -> list[list[float]]:
    """Every value of ``key`` anywhere in the document."""
    if isinstance(found, dict):
        own = [found[key]] if key in found else []
        return own + [v for inner in found.values() for v in _keyed(inner, key)]
    if isinstance(found, list):
        return [v for inner in found for v in _keyed(inner, key)]
    return []


@pytest.mark.parametrize("path", BENCHES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_trusted_runs_holds_unflagged_runs_only(path: Path) -> None:
    result = CliRunner().invoke(app, ["advise", "--bench", str(path), "-f", "json"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    counts = gpuscale.advise(bench=path).measured_counts
    unflagged = [m.speedup for c in counts for m in c.runs if not m.flagged]
    flagged = [m.speedup for c in counts for m in c.runs if m.flagged]
    for values in _keyed(doc, "trusted_runs"):
        for value in values:
            assert any(value == pytest.approx(u, rel=1e-9) for u in unflagged), value
            assert not any(value == pytest.approx(f, rel=1e-9) for f in flagged), value
    for measured, count in zip(doc["measured"], counts, strict=True):
        assert measured["trusted_runs"] == pytest.approx(count.of(count.trusted), rel=1e-9)


def test_a_flagged_only_disagreement_says_its_runs_used_not_trusted() -> None:
    """The two-sweep file's one 2-device run is flagged: the measured record trusts none,
    the disagreement's median is of that run, and ``why`` says so."""
    path = TESTS / "advice" / "cpu_mlp_two_sweeps_gloo.jsonl"
    result = CliRunner().invoke(app, ["advise", "--bench", str(path), "-f", "json"])
    doc = json.loads(result.output)
    ((measured,), (found,)) = doc["measured"], doc["disagreements"]
    assert measured["trusted_runs"] == []
    evidence = found["evidence"]
    assert "trusted_runs" not in evidence and evidence["why"] == "flagged_only"
    assert evidence["runs_used"] == pytest.approx(measured["speedups"], rel=1e-9)
