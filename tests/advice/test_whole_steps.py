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


def test_a_large_global_batch_and_its_micro_steps_are_written_as_the_table_prints_them() -> None:
    # 1,000,003 (a prime) splits over no count above one: one device steps it as 1,000,003
    # micro-steps of one sample; every sentence naming the batch or the micro-steps writes
    # them with separators ('x 1000003 accumulation steps (global 1,000,003)' was printed)
    advice = gpuscale.advise(
        params=7e6, step_ms=20, batch=64, global_batch=1_000_003, samples=1e8, link="nvlink4"
    )
    said = "\n".join(advice.explanation)
    assert "x 1,000,003 accumulation steps (global 1,000,003)" in said
    assert "the global batch 1,000,003 kept at every count does not split" in said
    assert "1000003" not in said
