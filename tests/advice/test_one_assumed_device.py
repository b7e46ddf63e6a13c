"""One advice, one assumed device: where no device is named, the memory check and the power
per device (so the energy) read the same device (``Machine.assumed_device``), the power said
as an assumption whose basis names that device; the energy is its board power from
``data/devices.csv`` times the accelerator-hours."""

from __future__ import annotations

import csv
from importlib import resources

import pandas as pd
import pytest

import gpuscale
from gpuscale.advice.explain.as_json import advice_document

NUMBERS = {"params": 7e9, "step_ms": 300.0, "batch": 8}  # one device cannot hold it: memory said


def _board_power_w() -> dict[str, float]:
    rows = csv.DictReader((resources.files("gpuscale") / "data" / "devices.csv").open())
    return {r["name"]: float(r["board_power_w"]) for r in rows}


def _power(document: dict) -> list[dict]:
    return [a for a in document["assumptions"] if a["kind"] == "power"]


@pytest.mark.parametrize(
    ("link", "device", "watts"),
    [
        (None, "H100 PCIe 80GB", 350.0),  # no link: a PCIe one assumed, so its PCIe card
        ("pcie-sys", "H100 PCIe 80GB", 350.0),
        ("nvlink2", "H100 SXM5 80GB", 700.0),  # a link implying no device: the SXM board
    ],
)
def test_memory_and_power_assume_one_device(link: str | None, device: str, watts: float) -> None:
    given = {} if link is None else {"link": link}
    document = advice_document(gpuscale.advise(**NUMBERS, **given))
    memory = document["memory"]
    assert memory["device"] == device and memory["device_assumed"]
    (power,) = _power(document)
    assert power["source"] == "assumed" and power["unit"] == "W per device"
    assert power["value"] == _board_power_w()[device] == watts
    assert device in power["said"] and device in power["basis"]
    assert "--device-name" in power["measure"] and "--power-w" in power["measure"]
    for row in document["predictions"]:
        assert row["energy_kwh"] == pytest.approx(row["accelerator_hours"] * watts / 1e3)
        assert device in row["energy_source"]


def test_the_explanation_says_the_power_once_as_assumed() -> None:
    advice = gpuscale.advise(**NUMBERS)
    power = [t for t in advice.explanation if t.startswith("Power:")]
    assert len(power) == 1 and "(assumed: no device named" in power[0]
    assert "H100 PCIe 80GB" in power[0]


@pytest.mark.parametrize(
    "given", [{"device_name": "H100 PCIe"}, {"power_w": 300.0}, {"device_name": "a10g"}]
)
def test_a_device_or_power_given_assumes_no_power(given: dict) -> None:
    """Named (catalogued or only listed: its power stays unknown) or given: nothing assumed."""
    document = advice_document(gpuscale.advise(**NUMBERS, **given))
    assert _power(document) == []
    known = [not pd.isna(row["energy_kwh"]) for row in document["predictions"]]
    if "power_w" in given:
        assert all(known)
    if given.get("device_name") == "a10g":  # no board power recorded for it: unknown
        assert not any(known)
