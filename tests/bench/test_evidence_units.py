"""A weak run's notes give the durations they compare in one unit: "the timed phase
lasted 22.7 ms ... (needs 1 s" and "a timed phase of 1.5 s, ... at 9.28 ms of timed
phase a step" mixed seconds and milliseconds in one sentence."""

from __future__ import annotations

import re

import pytest

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.evidence import MIN_BUSY_WINDOW_S, WINDOW_HEADROOM
from gpuscale.bench.results import bench_table

from ..builders import bench_record

DURATION = re.compile(r"(\d[\d,]*(?:\.\d+)?) (ms|s)\b")


def _ms(text: str) -> list[float]:
    """Every duration in ``text``, in ms; each of them in ms (the unit asserted)."""
    found = DURATION.findall(text)
    assert found and {unit for _, unit in found} == {"ms"}, text
    return [float(value.replace(",", "")) for value, _ in found]


@pytest.mark.parametrize("step_ms", [0.3, 3.0, 20.0])
def test_a_short_timed_phase_is_said_in_the_unit_of_its_step(step_ms: float) -> None:
    third = step_ms / 3
    row = bench_record(
        "mlp", 10**5, 1, 8e3 / step_ms, config=BenchConfig(steps=2, batch=8), batch=8,
        forward_ms=third, backward_ms=third, optimizer_ms=third,
    )  # fmt: skip
    notes = bench_table([row])["evidence_notes"].iloc[0]
    lasted = next(s for s in notes.split("; ") if s.startswith("busy share not measured"))
    window_ms, need_ms = _ms(lasted.split(":")[1])[:2]  # "lasted X ms, ... (needs Y ms"
    assert need_ms == MIN_BUSY_WINDOW_S * 1e3 and 0 < window_ms < need_ms, lasted
    basis = re.search(r"\(a timed phase of [^;]*", notes)
    assert basis, notes
    phase_ms, busy_ms, per_step_ms = _ms(basis.group(0))[:3]
    assert phase_ms == WINDOW_HEADROOM * busy_ms and busy_ms == MIN_BUSY_WINDOW_S * 1e3
    assert 0 < per_step_ms < busy_ms / 10
