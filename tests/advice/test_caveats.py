"""The advice agrees with the measurement beside it and says what its headline rests on:
a measured speedup outside the predicted interval is said (trusted over the prediction),
a flagged multi-device run is said to exist, defaults the user never gave and a wide step
interval qualify the first line."""

from __future__ import annotations

import math
from pathlib import Path

import gpuscale
from gpuscale.advice.caveats import headline
from gpuscale.bench.results import append_result

from ..builders import bench_record

BUSY = ["machine busy: other processes used 60% of its CPU time during the timed steps"]


def _results(tmp_path: Path, two_rate: float, two_flags: list[str] | None = None) -> Path:
    path = tmp_path / "results.jsonl"
    for world, rate, overhead, comm, flags in (
        (1, 1000.0, 0.0, None, []),
        (2, two_rate, 3.0, 4.0, two_flags or []),
    ):
        record = bench_record(
            "tf-7m",
            6_870_000,
            world,
            rate,
            forward_ms=2.0,
            backward_ms=4.0,
            optimizer_ms=1.0,
            sync_overhead_ms=overhead,
            comm_ms=comm,
            flags=flags,
        )
        append_result(path, record)
    return path


def test_a_measured_speedup_outside_the_interval_is_said_first(tmp_path: Path) -> None:
    # measured 0.818x on 2 devices where the step model predicts a gain
    advice = gpuscale.advise(bench=_results(tmp_path, 818.0), link="pcie4-x16", max_devices=4)
    measured = [c for c in advice.caveats if c.startswith("Measured on 2 devices")]
    assert measured and "0.818" in measured[0] and "outside the predicted" in measured[0]
    assert advice.explanation[: len(advice.caveats)] == list(advice.caveats)


def test_a_flagged_multi_device_run_is_said_to_exist(tmp_path: Path) -> None:
    path = _results(tmp_path, 818.0, two_flags=BUSY)
    advice = gpuscale.advise(bench=path, link="pcie4-x16", max_devices=4)
    text = " ".join(advice.explanation)
    assert "not measured (no multi-device run)" not in text
    assert "the run on 2 devices exists but is flagged" in text
    assert any("flagged (not trusted)" in c for c in advice.caveats)
    allowed = gpuscale.advise(bench=path, link="pcie4-x16", max_devices=4, allow_flagged=True)
    said = " ".join(allowed.caveats)
    assert "flagged (not trusted)" not in said and "used with --allow-flagged" in said
    assert "exists but is flagged" not in " ".join(allowed.explanation)


def test_defaults_never_given_qualify_the_first_line() -> None:
    advice = gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb")
    assert (
        advice.explanation[0].startswith("Provisional")
        and "--samples 10M" in (advice.explanation[0])
    )
    given = gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb", samples=5e6)
    assert not any(line.startswith("Provisional") for line in given.explanation)


def test_a_wide_step_interval_softens_a_multi_device_choice() -> None:
    lines = headline(
        samples=5e6, samples_used=True, noise_steps=2, step_width_log=math.log(3.84), devices=8
    )
    assert any("noise scale measured over 2 step(s)" in line for line in lines)
    firm = [line for line in lines if line.startswith("Not a firm choice")]
    assert firm and "+/-284%" in firm[0] and "--nproc 1,8" in firm[0]
    assert (
        headline(samples=5e6, samples_used=True, noise_steps=None, step_width_log=0.1, devices=8)
        == []
    )
