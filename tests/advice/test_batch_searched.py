"""With a convergence model and no global batch, the advice searches each count's batch and
accumulation; it says so, with the global batch each count took (a fresh clone's bench then
advise showed global batch 16 on 1 device and 32 on 2 with no word on why)."""

from __future__ import annotations

import re

import gpuscale


def _searched(advice) -> list[str]:
    return [s for s in advice.explanation if s.startswith("Batch searched")]


def test_the_searched_batches_are_said_from_the_table() -> None:
    advice = gpuscale.advise(
        params=2e5, step_ms=20.0, batch=8, noise_scale=50.0, interconnect="pcie-phb", max_devices=4
    )
    frame = advice.predictions
    assert advice.calibration.run.kept_global_batch is None  # the search, not a kept batch
    (line,) = _searched(advice)
    said = {
        int(n): int(b.replace(",", ""))
        for b, n in re.findall(r"global batch ([\d,]+)\) on (\d+) device", line)
    }
    assert said == dict(zip(frame["accelerators"], frame["global_batch"], strict=True))
    assert frame["global_batch"].nunique() > 1  # the search took a larger batch at N > 1
    focus = frame.set_index("accelerators").loc[advice.decision.focus.accelerators]
    assert "the global batch grows with the count" in line
    assert f"convergence factor of {focus['convergence_factor']:.0%}" in line
    assert f"global_batch={frame['global_batch'].iloc[0]}" in line


def test_a_kept_batch_is_not_said_as_searched() -> None:
    common = {"params": 2e5, "step_ms": 20.0, "batch": 8, "max_devices": 4}
    strong = gpuscale.advise(**common)  # no convergence model: the global batch kept
    weak = gpuscale.advise(**common, noise_scale=50.0, scaling="weak")
    given = gpuscale.advise(**common, noise_scale=50.0, global_batch=16)
    for advice in (strong, weak, given):
        assert not _searched(advice)
    assert any(s.startswith("Strong scaling") for s in strong.explanation)
    assert any(s.startswith("Weak scaling") for s in weak.explanation)


def test_a_count_holding_a_smaller_searched_batch_is_searched() -> None:
    """An 8B model's activations at 4 sequences a device fill an 80 GB device at any count;
    at 1 they fit FSDP from 4 devices, with the global batch kept or searched."""
    common = {"preset": "llama3-8b", "step_ms": 8000.0, "batch": 4, "device_name": "H100"}
    kept = gpuscale.advise(**common, max_devices=16)
    searched = gpuscale.advise(**common, max_devices=16, noise_scale=1000.0)
    for advice in (kept, searched):
        memory = advice.calibration.machine.memory
        assert advice.calibration.run.strategy == "fsdp"
        assert memory.fits_from("fsdp") == 4
        assert memory.micro_batch(4) == 1
        frame = advice.predictions.set_index("accelerators")
        assert frame.loc[4, "batch_per_device"] == 1 and frame.loc[4, "fits"]
        assert not frame.loc[[1, 2], "fits"].any()
    frame = searched.predictions.set_index("accelerators")
    assert frame.loc[[4, 8, 16], "fits"].all()  # none larger than the batch that fits
    assert (frame.loc[[4, 8, 16], "batch_per_device"] == 1).all()
