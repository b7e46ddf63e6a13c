"""The advice agrees with the measurement beside it and says what its headline rests on:
a measured speedup outside the predicted interval is said (trusted over the prediction),
a flagged multi-device run is said to exist, defaults the user never gave and a wide step
interval qualify the first line."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.request_fields import DEFAULT_SAMPLES
from gpuscale.bench.evidence import FIRM_STEPS
from gpuscale.bench.results_file import append_result
from gpuscale.quantities import number

from ..builders import bench_record
from ..golden import Golden
from .lines import lines_on

VIEW = "advice/caveats"

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


def test_a_measured_speedup_outside_the_interval_is_said_first(
    tmp_path: Path, golden: Golden
) -> None:
    # measured 0.818x on 2 devices where the step model predicts a gain: a disagreement,
    # its sentence first among the caveats (issue 60 item 4: the count rests on it)
    advice = gpuscale.advise(bench=_results(tmp_path, 818.0), link="pcie4-x16", max_devices=4)
    (found,) = advice.disagreements
    assert found.accelerators == 2 and found.speedups == pytest.approx((0.818,))
    assert not found.predicted_low <= found.measured_speedup <= found.predicted_high
    assert advice.caveats[0].startswith("Measured on 2") and "0.818" in advice.caveats[0]
    golden.check(VIEW, "a measured speedup outside the interval", advice.caveats[0])
    assert advice.explanation[: len(advice.caveats)] == list(advice.caveats)


def test_a_flagged_multi_device_run_is_said_to_exist(tmp_path: Path, golden: Golden) -> None:
    path = _results(tmp_path, 818.0, two_flags=BUSY)
    advice = gpuscale.advise(bench=path, link="pcie4-x16", max_devices=4)
    overlap = lines_on(advice.explanation, "Overlap:")
    assert "flagged" in overlap and "no multi-device run" not in overlap
    golden.check(VIEW, "the overlap of a flagged run", overlap, paths={str(tmp_path): "<tmp>"})
    # its 0.818x, outside the interval, is the only measurement at 2: used, its flag said
    (found,) = advice.disagreements
    assert found.why == "flagged_only" and found.flags == tuple(BUSY)
    assert advice.caveats[0].startswith("Measured on 2") and "1 run, flagged (" in advice.caveats[0]
    golden.check(VIEW, "a flagged run outside the interval", advice.caveats[0])
    allowed = gpuscale.advise(bench=path, link="pcie4-x16", max_devices=4, allow_flagged=True)
    (used,) = allowed.disagreements
    assert used.why == "allowed_flagged"
    assert allowed.caveats[0].startswith("Measured on 2") and "allow_flagged=" in allowed.caveats[0]
    golden.check(VIEW, "a flagged run allowed, outside the interval", allowed.caveats[0])
    assert "flagged" not in lines_on(allowed.explanation, "Overlap:")


def test_defaults_never_given_qualify_the_first_line(golden: Golden) -> None:
    advice = gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb")
    assert advice.calibration.search.defaults == ("samples",)
    assert advice.explanation[0].startswith("Provisional")
    # the default as a keyword that pastes: the literal is the number used
    (literal,) = re.findall(r"samples=([\d_]+)", advice.explanation[0])
    assert literal == "10_000_000" and ast.literal_eval(literal) == DEFAULT_SAMPLES
    golden.check(VIEW, "the samples not given", advice.explanation[0])
    given = gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb", samples=5e6)
    assert not any(line.startswith("Provisional") for line in given.explanation)


def test_every_default_the_time_rests_on_is_said_and_a_value_given_never_is(
    golden: Golden,
) -> None:
    """The samples, the batch of a lone step time and the link: each said where the user
    gave none, never where they gave one, even one equal to the default."""
    bare = gpuscale.advise(params=7e6, step_ms=2)
    first = bare.explanation[0]
    assert first.startswith("Provisional")
    assert "samples=10_000_000" in first and "batch 32" in first and "pcie-phb" in first
    golden.check(VIEW, "the samples, the batch and the link not given", first)
    everything = gpuscale.advise(params=7e6, step_ms=2, batch=32, link="pcie-phb", samples=1e7)
    assert not any(line.startswith("Provisional") for line in everything.explanation)
    assert (
        everything.decision.chosen.accelerators == bare.decision.chosen.accelerators
    )  # the same numbers, given


def test_the_csv_path_says_what_its_numbers_rest_on_on_stderr(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gpuscale.cli import app

    result = CliRunner().invoke(app, ["advise", "--params", "7M", "--step-ms", "2", "-f", "csv"])
    assert result.exit_code == 0, result.output
    assert "note: Provisional:" in result.stderr and "--samples 10M" in result.stderr
    assert "Provisional" not in result.stdout  # data only on stdout


def test_a_wide_step_interval_softens_a_multi_device_choice(golden: Golden) -> None:
    said = {"width": math.log(3.84), "devices": 8, "host": "", "again": "", "across": None}
    firm = sentence("not_firm", firm=FIRM_STEPS, **said)
    # a multiplicative interval as it reads: never "+/-284%" (no step is 184% below 0)
    assert firm.startswith("Not a firm choice")
    assert "-74% to +284%" in firm and "3.84" in firm and "--nproc 1,8" in firm
    golden.check(VIEW, "a wide step interval", firm)


# a long time's hours or days in parentheses restate its minutes (``format_minutes``)
TIME = re.compile(
    r"(\d[\d,]*(?:\.\d+)?) (s|min|h|d)(?: \([\d.,-]+ (?:h|days)\))? (?:to train|at efficiency)"
)
STEP_PART = re.compile(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?) (ms|s)\b")


@pytest.mark.parametrize(
    ("params", "step_ms", "samples"),
    [
        (25e6, 100, 6e4),  # about 1.8 min on 2 devices, 48 s on 8
        (300e6, 1500, 6.8e3),  # about 1.7 min and 64 s
        (1e9, 8000, 1e7),  # a 1.38 s step on 8 devices: compute 1 s, fixed cost 3.5 ms
        (7e6, 20, 1e9),
    ],
)
def test_times_in_one_unit_as_the_table_has_them(params, step_ms, samples) -> None:
    """The recommendation and the fastest count say their times in one unit (never "47.9 s"
    beside "1.79 min"), each the predictions' ``time_to_train_min`` in it; a step and its
    parts likewise (never "1.38 s: compute 1 s (of it 3.5 ms ...")."""
    advice = gpuscale.advise(
        params=params, step_ms=step_ms, batch=32, link="pcie-phb", samples=samples, max_devices=8
    )
    times = [TIME.findall(line) for line in advice.explanation if line.startswith(("Use", "Fast"))]
    found = [t for line in times for t in line]
    assert found and len({unit for _, unit in found}) == 1, found
    per = {"s": 1 / 3600, "min": 1 / 60, "h": 1.0, "d": 24.0}
    hours = advice.predictions["time_to_train_min"] / 60
    table = {number(h / per[found[0][1]]) for h in hours}
    assert all(value in table for value, _ in found), (found, table)
    step = next(line for line in advice.explanation if line.startswith("On "))
    assert len({unit for _, unit in STEP_PART.findall(step.split("; speedup")[0])}) == 1, step
