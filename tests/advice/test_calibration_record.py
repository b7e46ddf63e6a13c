"""The calibration record (``advice.calibration``): parts of at most 15 fields, each
checked where it is made, and ``Calibration.at``, the record at one end of an assumed
range, changing only the fields it names."""

from __future__ import annotations

from dataclasses import fields

import pytest

from gpuscale.advice.calibration import (
    Bench,
    Calibration,
    Machine,
    Run,
    Runs,
    Said,
    Search,
    StepModel,
)
from gpuscale.advice.model.step import Compute, ModelSpec
from gpuscale.interconnect.network import Link, Network

NETWORK = Network(intra=Link(busbw_gbs=10.0, latency_us=20.0, name="test"))
RECORD = Calibration(
    model=StepModel(spec=ModelSpec(params=10e6), compute=Compute(tflops=50.0, fixed_ms=2.0)),
    run=Run(batch=32, accum=2),
    machine=Machine(network=NETWORK, max_devices=8),
)


@pytest.mark.parametrize("part", [StepModel, Run, Machine, Runs, Bench, Said, Search, Calibration])
def test_every_part_is_narrow(part: type) -> None:
    assert len(fields(part)) <= 15


def test_at_changes_the_fields_named_and_keeps_the_rest() -> None:
    faster = Compute(tflops=100.0, fixed_ms=1.0)
    at = RECORD.at({"model": {"compute": faster}, "run": {"scaling": "strong"}})
    assert at.model.compute == faster and at.model.spec == RECORD.model.spec
    assert at.run.scaling == "strong" and at.run.batch == 32
    assert at.machine is RECORD.machine and at.search is RECORD.search
    assert RECORD.run.scaling == "search"  # a value: the record itself unchanged


def test_the_global_batch_kept_and_the_counts_searched() -> None:
    assert RECORD.run.kept_global_batch is None
    assert RECORD.at({"run": {"scaling": "strong"}}).run.kept_global_batch == 64  # 32 x 2
    assert RECORD.at({"run": {"global_batch": 256}}).run.kept_global_batch == 256
    assert RECORD.run.largest_batch == 32
    assert RECORD.machine.device_counts == [1, 2, 4, 8]


@pytest.mark.parametrize(
    "changes",
    [
        {"run": {"batch": 0}},
        {"run": {"max_batch": 16}},  # below the batch
        {"run": {"scaling": "sideways"}},
    ],
)
def test_a_part_refuses_a_value_that_cannot_be(changes: dict[str, dict[str, object]]) -> None:
    with pytest.raises(ValueError):
        RECORD.at(changes)
