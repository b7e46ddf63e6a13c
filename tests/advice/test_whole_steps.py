"""Training takes whole optimizer steps: a count whose global batch is larger than the
samples to train still takes one step, never a fraction of one (``--samples 63`` with a
global batch of 512 was predicted an eighth of a step, a speedup no run can have)."""

from __future__ import annotations

import pytest

import gpuscale


@pytest.mark.parametrize("samples", [1, 63, 64, 65, 640, 1_000_003])
@pytest.mark.parametrize("scaling", ["weak", "strong"])
def test_every_row_trains_in_whole_steps(samples: int, scaling: str) -> None:
    advice = gpuscale.advise(
        params=7e8, step_ms=2, batch=64, samples=samples, interconnect="nvlink4", scaling=scaling
    )
    for table in (advice.predictions, advice.weak_table):
        if table is None:
            continue
        step_ms = table["step_ms"].to_numpy(float)
        steps = table["time_to_train_min"].to_numpy(float) * 60e3 / step_ms
        batches = table["global_batch"].to_numpy(float)
        assert (steps >= 1 - 1e-9).all()  # at least one step
        assert steps == pytest.approx(steps.round(), rel=1e-9)  # a whole number of them
        assert (steps * batches >= samples * (1 - 1e-12)).all()  # that see every sample
        assert ((steps - 1) * batches < samples).all()  # and no more steps than that needs
