"""Flagged runs read with --allow-flagged are said used, and flagged, wherever the runs
are counted: a new user's walk found --explain saying "Measured on 2 devices: ... from 2
trusted runs" of two runs one of which was flagged, and later "(4 runs; 1 flagged, not
trusted; ...)" of runs the advice had used."""

from __future__ import annotations

import re
from pathlib import Path

import gpuscale
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results_file import append_result

from ..builders import bench_record
from ..golden import Golden

VIEW = "advice/allowed_flagged"
BUSY = ["machine busy: other processes used 60% of its CPU time during the timed steps"]


def _results(tmp_path: Path) -> Path:
    """One N = 1 run and two at N = 2, the second flagged; 4 timed steps each (weak)."""
    path = tmp_path / "results.jsonl"
    for world, rate, flags in ((1, 1000.0, []), (2, 1400.0, []), (2, 1380.0, BUSY)):
        record = bench_record(
            "tf-7m", 6_870_000, world, rate, forward_ms=2.0, backward_ms=4.0, optimizer_ms=1.0,
            sync_overhead_ms=3.0 if world > 1 else 0.0, comm_ms=4.0 if world > 1 else None,
            flags=flags, config=BenchConfig(steps=4, batch=8),
        )  # fmt: skip
        append_result(path, record)
    return path


def test_flagged_runs_used_are_said_flagged_and_used(tmp_path: Path, golden: Golden) -> None:
    path = _results(tmp_path)
    advice = gpuscale.advise(bench=path, link="pcie4-x16", allow_flagged=True)
    (at_two,) = advice.measured_counts
    assert len(at_two.runs) == len(at_two.used) == 2 and at_two.why == "allowed_flagged"
    assert at_two.allowed_flagged == 1
    evidence = advice.calibration.runs.evidence
    assert evidence is not None and evidence.untrusted == 1 and evidence.weak
    said = [line for line in advice.explanation if re.search(r"\b1 flagged", line)]
    assert any(line.startswith("Measured on 2 devices") for line in said)
    # no run the advice used is called trusted beside flagged, nor not trusted
    assert not any("trusted run" in line or "not trusted" in line for line in said), said
    # Python's words name the field as its keyword, in every line (the runs a figure
    # rests on too), the command line's as its option
    assert not any("--allow-flagged" in line for line in advice.explanation), said
    assert sum("used with allow_flagged=" in line for line in said) == 5
    case, paths = "a flagged run allowed beside a trusted one", {str(tmp_path): "<tmp>"}
    golden.check(VIEW, case, "\n".join(said), paths=paths)
    # without --allow-flagged the flagged run is left out, and said so
    plain = gpuscale.advise(bench=path, link="pcie4-x16")
    (kept,) = plain.measured_counts
    assert kept.used == kept.trusted and len(kept.used) == 1 and kept.allowed_flagged == 0
    assert plain.calibration.runs.evidence.untrusted == 0  # none read: none said used


def test_the_weak_runs_counted_are_the_runs_used_flagged_ones_allowed_too(tmp_path: Path) -> None:
    """Every run timed 4 steps; a flagged run allowed is graded flagged, not weak, and the
    warning said "2 of the 3 bench runs ... are weak" of three runs of 4 steps each."""
    path = _results(tmp_path)
    allowed = gpuscale.advise(bench=path, link="pcie4-x16", allow_flagged=True)
    (weak,) = [w for w in allowed.decision.warnings if "weak evidence" in w]
    assert "all 3 bench runs of tf-7m the advice uses (on 1 and 2 devices) are weak" in weak
    plain = gpuscale.advise(bench=path, link="pcie4-x16")  # the flagged run left out
    (weak,) = [w for w in plain.decision.warnings if "weak evidence" in w]
    assert "both bench runs of tf-7m the advice uses (on 1 and 2 devices) are weak" in weak
