"""A new user's walk: ``advise --params 7 --step-ms 2 --batch 64`` advised "a 7-parameter
model" (7M or 7B meant), and ``plan --power-w 0.7`` (kW typed) gave 0.0005 kWh, both
silently. A number typed under its field's floor (``plausibility.TYPED_FLOORS``: the
parameters, the FLOPs per sample, the watts per device; the samples to train: one step of
the batch advised on) is flagged IMPLAUSIBLE and kept out of the advice, as a step shorter
than its kernels is, on every entry that takes it: advise (numbers and --bench), plan, the
Python API."""

from __future__ import annotations

import csv
import json
import math
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale import plausibility
from gpuscale.advice.derived import SMALLEST_SEARCHED
from gpuscale.advice.types import FindingKind
from gpuscale.cli import app

NUMBERS = {"params": 7e6, "step_ms": 2, "batch": 64, "link": "nvlink4"}
BENCH = str(Path(__file__).parent / "cpu_tiny_model_gloo.jsonl")


def _typed(advice) -> list[tuple[str, float]]:
    """(field, value) of each typed-number flag of ``advice``."""
    return [
        (w["field"], w["value"])
        for w in advice.calibration.said.warnings
        if getattr(w, "kind", None) is FindingKind.TYPED_UNDER_FLOOR
    ]


def test_the_floors_rest_on_the_catalogue_and_the_smallest_models() -> None:
    rows = list(csv.DictReader((resources.files("gpuscale") / "data" / "devices.csv").open()))
    watts = [float(r["board_power_w"]) for r in rows if r["board_power_w"]]
    assert min(watts) == plausibility.LOWEST_BOARD_POWER_W == 70.0  # the T4
    assert max(watts) / 1e3 < plausibility.MIN_POWER_W  # every device's power typed in kW
    assert plausibility.MIN_PARAMS == SMALLEST_SEARCHED < 19_210  # the toy model benched
    assert plausibility.MIN_FLOPS_PER_SAMPLE == 6 * plausibility.MIN_PARAMS


@pytest.mark.parametrize(
    ("field", "typed", "meant"),
    [
        ("params", 7, 7e6),
        ("power_w", 0.7, 700.0),
        ("flops_per_sample", 4, 4e9),
        ("samples", 10, 10e6),  # fewer than one step of batch 64
    ],
)
def test_a_number_typed_in_the_wrong_unit_is_flagged_and_kept_out(field, typed, meant) -> None:
    advice = gpuscale.advise(**{**NUMBERS, field: typed})
    assert _typed(advice) == [(field, typed)] and advice.calibration.said.implausible
    assert advice.decision.refused  # "Measure first": no count advised on it
    assert not advice.predictions.empty  # the table is still shown
    right = gpuscale.advise(**{**NUMBERS, field: meant})
    assert _typed(right) == [] and not right.calibration.said.implausible


def test_samples_fewer_than_one_step_of_the_global_batch_kept_are_flagged() -> None:
    # a --global-batch kept at every count is the batch advised on: 1,000 samples to train
    # are under one of its steps (the time said would be one step of 100M samples)
    advice = gpuscale.advise(**NUMBERS, global_batch=10**8, samples=1000)
    assert _typed(advice) == [("samples", 1000)] and advice.decision.refused
    kind = FindingKind.TYPED_UNDER_FLOOR
    said = advice.calibration.said.warnings
    assert [w["floor"] for w in said if getattr(w, "kind", None) is kind] == [10**8]
    fits = gpuscale.advise(**NUMBERS, global_batch=4096, samples=10**6)
    assert _typed(fits) == [] and not fits.calibration.said.implausible
    # the default samples (10M, none typed) under one step of the global batch likewise
    unsaid = gpuscale.advise(**NUMBERS, global_batch=10**8)
    assert _typed(unsaid) == [("samples", 10**7)] and unsaid.decision.refused
    kind = FindingKind.TYPED_UNDER_FLOOR
    flagged = [w for w in unsaid.calibration.said.warnings if getattr(w, "kind", None) is kind]
    assert [(w["default"], w["floor"]) for w in flagged] == [(True, 10**8)]


def test_the_bench_path_flags_the_numbers_typed_beside_it() -> None:
    advice = gpuscale.advise(bench=BENCH, power_w=0.7)
    assert _typed(advice) == [("power_w", 0.7)] and advice.calibration.said.implausible
    other = gpuscale.advise(bench=BENCH, params=7, family="custom", allow_flagged=True)
    assert ("params", 7) in _typed(other)
    assert _typed(gpuscale.advise(bench=BENCH, power_w=30)) == []


def test_the_cli_says_the_flag_first() -> None:
    args = ["advise", "--params", "7", "--step-ms", "2", "--batch", "64", "-f", "json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    warnings = json.loads(result.output)["recommendation"]["warnings"]
    assert [w.split(":")[0] for w in warnings] == ["IMPLAUSIBLE"]


def test_a_plan_leaves_out_the_energy_of_a_power_in_kw() -> None:
    table = gpuscale.plan(workload="bert", accelerator="H100", devices="8,16", power_w=0.7)
    assert table["energy_kwh"].map(math.isnan).all()
    assert sum(n.startswith("IMPLAUSIBLE") for n in table.attrs["notes"]) == 1
    watts = gpuscale.plan(workload="bert", accelerator="H100", devices="8,16", power_w=700)
    assert (watts["energy_kwh"] > 0).all()
    assert not any(n.startswith("IMPLAUSIBLE") for n in watts.attrs["notes"])
    args = ["plan", "-w", "bert", "-a", "H100", "-n", "8,16", "--power-w", "0.7", "-f", "json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert all(r["energy_kwh"] is None for r in document["rows"])


def test_the_ceilings_are_ten_times_the_highest_the_data_holds() -> None:
    from gpuscale.hardware.catalogue import devices
    from gpuscale.hardware.ceilings import CEILING_FACTOR, typed_ceilings
    from gpuscale.hardware.links import PRESETS

    ceilings = typed_ceilings()
    assert ceilings["busbw_gbs"].top == PRESETS["nvlink5"].line_rate_gbs == 900.0
    assert ceilings["busbw_gbs"].ceiling == CEILING_FACTOR * 900.0 == 9000.0
    assert ceilings["power_w"].top == max(d.board_power_w for d in devices()) == 1000.0
    # every preset's bus bandwidth, and every part's power, lies under them
    assert max(p.busbw_gbs for p in PRESETS.values()) < ceilings["busbw_gbs"].ceiling / 10


@pytest.mark.parametrize(
    ("field", "typed", "meant"),
    [("busbw_gbs", 5e4, 500.0), ("power_w", 5e4, 700.0)],  # MB/s typed as GB/s; a node's W
)
def test_a_number_above_its_ceiling_is_flagged_and_kept_out(field, typed, meant) -> None:
    numbers = {k: v for k, v in NUMBERS.items() if field != "busbw_gbs" or k != "link"}

    def above(advice) -> list[tuple[str, float]]:
        warnings = advice.calibration.said.warnings
        kind = FindingKind.TYPED_ABOVE_CEILING
        return [(w["field"], w["value"]) for w in warnings if getattr(w, "kind", None) is kind]

    advice = gpuscale.advise(**{**numbers, field: typed})
    assert above(advice) == [(field, typed)] and advice.calibration.said.implausible
    assert advice.decision.refused
    right = gpuscale.advise(**{**numbers, field: meant})
    assert above(right) == [] and not right.calibration.said.implausible
    if field == "power_w":  # the plan leaves its energy out, as under the floor
        table = gpuscale.plan(workload="bert", accelerator="H100", devices="8", power_w=typed)
        assert table["energy_kwh"].map(math.isnan).all()
        assert sum(n.startswith("IMPLAUSIBLE") for n in table.attrs["notes"]) == 1
