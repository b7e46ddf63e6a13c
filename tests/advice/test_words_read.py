"""Sentences a new user found hard to read: the link a sweep measured named as a phrase
("on measured (c.jsonl, 2 ranks)"), and the fastest count's speedup given as an interval
alone, where the advised count's gives its value and interval."""

from __future__ import annotations

import re
from pathlib import Path

import gpuscale

from .test_calibrate import sweep_file


def test_the_link_a_sweep_measured_reads_as_a_phrase(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, 2.0, 100.0, device="cuda")  # GPUs, as the model's
    advice = gpuscale.advise(params=7e6, step_ms=40, batch=32, collectives=str(path))
    name = advice.calibration.machine.network.name
    assert name == f"the link measured in {path.name} (2 ranks)"
    assert not any("on measured (" in line for line in advice.explanation)


def test_the_fastest_count_gives_its_speedup_and_interval() -> None:
    sweep = Path(__file__).parent.parent / "report" / "h100_sweep.jsonl"  # measured on an H100
    advice = gpuscale.advise(
        bench=sweep, model="tf-7m", link="nvlink4", max_devices=8, target_efficiency=0.9
    )
    assert advice.decision.fastest != advice.recommended  # the premise: a line of its own
    [line] = [s for s in advice.explanation if s.startswith("Fastest:")]
    row = advice.predictions.set_index("accelerators").loc[advice.decision.fastest]
    said = re.search(r"speedup ([0-9.]+)x \(([0-9.]+)-([0-9.]+)x", line)
    assert said, line
    value, low, high = (float(g) for g in said.groups())
    assert abs(value - row["speedup"]) <= 0.01 * row["speedup"]
    assert low <= value <= high
    assert abs(low - row["speedup_low"]) <= 0.01 * row["speedup_low"]
