"""Sentences a new user found hard to read: the link a sweep measured named as a phrase
("on measured (c.jsonl, 2 ranks)"), and the fastest count's speedup given as an interval
alone, where the advised count's gives its value and interval."""

from __future__ import annotations

import re
from pathlib import Path

import gpuscale
from gpuscale.tables.commands import quoted_path

from .test_calibrate import sweep_file


def test_the_link_a_sweep_measured_reads_as_a_phrase(tmp_path: Path) -> None:
    path = sweep_file(tmp_path, 2.0, 100.0, device="cuda")  # GPUs, as the model's
    advice = gpuscale.advise(params=7e6, step_ms=40, batch=32, collectives=str(path))
    name = advice.calibration.machine.network.name
    assert name == f"the link measured in {quoted_path(path)} (2 ranks)"
    assert not any("on measured (" in line for line in advice.explanation)


def test_two_sweeps_of_one_name_are_named_apart(tmp_path: Path) -> None:
    """Two sweeps named coll.jsonl, in two folders (one with a space), read alike: the
    advice named each by its file name alone. Each is named as given, quoted as a file
    refusal names it, in the link's name and in the line on the link."""
    said = {}
    for folder in ("a", "my runs"):
        (tmp_path / folder).mkdir()
        path = sweep_file(tmp_path / folder, 2.0, 100.0, device="cuda")
        advice = gpuscale.advise(params=7e6, step_ms=40, batch=32, collectives=str(path))
        quoted = quoted_path(path)
        assert quoted in advice.calibration.machine.network.name
        [line] = [s for s in advice.explanation if s.startswith("Link: the curves")]
        assert f" {quoted} " in line, line
        said[folder] = line
    assert said["a"] != said["my runs"]
    assert "'" in said["my runs"]  # the space quoted: the path pastes whole


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
