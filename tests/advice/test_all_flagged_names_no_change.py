"""Runs that are all flagged, read with --allow-flagged, are not trusted: like weak runs
they name no change to make, only the measurement that would (a new user's walk: the
flagged runs named "a faster link ..." while weak runs of the same file named none)."""

from __future__ import annotations

import json
from pathlib import Path

import gpuscale
from gpuscale.plausibility import FlagKind

FILE = Path(__file__).parent / "h100_resnet50_bf16.jsonl"
BUSY = f"{FlagKind.BUSY}: other processes used 30% of its CPU time during the timed steps"


def _all_flagged(tmp_path: Path) -> Path:
    """The file with every run flagged (a busy host)."""
    records = [json.loads(line) for line in FILE.read_text(encoding="utf-8").splitlines()]
    path = tmp_path / "flagged.jsonl"
    lines = [json.dumps({**r, "flags": [*(r.get("flags") or []), BUSY]}) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_all_flagged_runs_say_what_to_measure_not_what_to_change(tmp_path: Path) -> None:
    trusted = gpuscale.advise(bench=FILE)
    assert trusted.decision.settle is None  # firm runs: a change is named
    advice = gpuscale.advise(bench=_all_flagged(tmp_path), allow_flagged=True)
    found = advice.calibration.runs.evidence
    assert found.all_flagged and found.untrusted == found.runs == 2
    assert found.flag_kinds == (FlagKind.BUSY.value,)
    settle = advice.decision.settle
    assert settle is not None and "gpuscale bench --model torchvision:resnet50" in settle
    # the numbers are the same runs' (only the trust differs): the same count and step
    assert advice.decision.chosen.accelerators == trusted.decision.chosen.accelerators
    assert advice.predictions["step_ms"].equals(trusted.predictions["step_ms"])


def test_the_rerun_of_flagged_runs_times_no_fewer_steps_than_they_did(tmp_path: Path) -> None:
    """The command that measures flagged runs again keeps the steps they timed where above
    the bench's default (20): a rerun at the default would be weaker evidence than the runs
    it replaces; at the default, no --steps is added."""
    path = _all_flagged(tmp_path)
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    longer = [{**r, "config": {**r["config"], "steps": 60}} for r in records]
    path.write_text("\n".join(map(json.dumps, longer)) + "\n", encoding="utf-8")
    advice = gpuscale.advise(bench=path, allow_flagged=True)
    assert advice.calibration.runs.evidence.kept_steps == "--steps 60"
    assert advice.decision.settle is not None and "--steps 60`" in advice.decision.settle
    default = gpuscale.advise(bench=_all_flagged(tmp_path), allow_flagged=True)
    assert default.calibration.runs.evidence.kept_steps == ""
    assert default.decision.settle is not None and "--steps" not in default.decision.settle
