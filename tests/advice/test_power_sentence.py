"""The power sentence says how each count is charged, as the predictions' energy_source
says it (a new user's walk: on an H100 file with N = 1 power measured only at batch 32, the
sentence said "each count is charged the watts of its own per-device batch" while
energy_source charged batches 16, 8 and 4 batch 32's watts, the nearest measured)."""

from __future__ import annotations

import re
from pathlib import Path

import gpuscale
from gpuscale.advice.explain.caveats import power_said, source_at
from gpuscale.advice.model.hardware import Power

H100 = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"


def _parts(sentence: str) -> dict[int, str]:
    """The part of the sentence that says how each count is charged: ``2, 4 and 8
    devices (...): ...`` -> {2: part, 4: part, 8: part}."""
    said = {}
    for part in sentence.split("; ")[1:]:
        counts = re.match(r"([\d, and]+) devices?\b", part)
        assert counts, part
        for n in re.findall(r"\d+", counts.group(1)):
            said[int(n)] = part
    return said


def _check(sentence: str, predictions) -> None:
    parts = _parts(sentence)
    for row in predictions.itertuples():
        part, source = parts[int(row.accelerators)], row.energy_source
        nearest = re.search(r"at batch (\d+) \(the nearest measured to batch (\d+)\)", source)
        if nearest:
            assert f"charged the watts of batch {nearest.group(1)}, the nearest measured" in part
            assert "own per-device batch" not in part
            smaller = int(nearest.group(2)) < int(nearest.group(1))
            assert ("likely lower" in part) == smaller
        elif "whole job" in source:
            assert "whole job's power measured" in part
        elif (
            source.endswith(f"at batch {row.batch_per_device:g}")
            or f"at batch {row.batch_per_device:g} x" in source
        ):
            assert "own per-device batch" in part
        else:
            assert "interpolated" in source and "interpolated" in part


def test_the_h100_sentence_says_what_energy_source_charges() -> None:
    advice = gpuscale.advise(bench=H100, model="tf-30m")
    sentence = next(line for line in advice.explanation if line.startswith("Power: "))
    nearest = advice.predictions["energy_source"].str.contains("nearest measured")
    assert nearest.any()  # the walk: one batch measured, smaller batches charged its watts
    _check(sentence.removeprefix("Power: ").removesuffix("."), advice.predictions)


def test_every_way_a_count_is_charged_is_said_for_that_count() -> None:
    import pandas as pd

    power = Power(
        300.0,
        "measured (NVML) by N = 1 runs at per-device batch 8 and 32",
        total_w_at=((1, 32, 300.0),),
        at_batch=((8, 200.0), (32, 300.0)),
    )
    counts = [(1, 32), (2, 32), (4, 16), (8, 4), (16, 64)]
    predictions = pd.DataFrame(
        {
            "accelerators": [n for n, _ in counts],
            "batch_per_device": [b for _, b in counts],
            "energy_source": [source_at(power, n, b) for n, b in counts],
        }
    )
    _check(power_said(power, counts), predictions)


def test_energy_at_an_assumed_devices_power_is_said_provisional() -> None:
    """No device named: the kWh the answer says are at the assumed device's board power (an
    H100 PCIe's 350 W on a PCIe link); a caveat says so with the watts and the device. Named
    (or its power given), no such caveat."""
    assumed = gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb")
    power = assumed.calibration.machine.power
    assert (power.kind.value, power.watts, power.device) == ("assumed", 350, "H100 PCIe 80GB")
    [line] = [c for c in assumed.caveats if "kWh" in c]
    assert "350 W" in line and "H100 PCIe 80GB" in line
    for named in ({"device_name": "A100 80GB"}, {"power_w": 300.0}):
        advice = gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb", **named)
        assert advice.calibration.machine.power.kind.value != "assumed"
        assert not [c for c in advice.caveats if "kWh" in c]
