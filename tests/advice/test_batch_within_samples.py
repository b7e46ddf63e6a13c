"""Where the batch is searched, no count takes a global batch larger than the samples it
trains: such a step holds more samples than the training has, and the ceiling of one step
would read it as the fastest."""

from __future__ import annotations

import gpuscale


def test_no_searched_global_batch_exceeds_the_samples_to_train() -> None:
    advice = gpuscale.advise(
        params=340e6,
        step_ms=300.0,
        batch=32,
        device_name="H100-SXM",
        interconnect="nvlink4",
        flops_per_sample=2e12,
        fixed_ms=4.0,
        samples=200,
        noise_scale=1e5,
        max_devices=64,
        nodes=8,
    )
    frame = advice.predictions
    assert advice.calibration.run.kept_global_batch is None  # the search, not a kept batch
    # up to 32 devices a global batch of at most 200 splits over them (the search's least
    # per-device batch at 64 does not)
    upto = frame[frame["accelerators"] <= 32]
    assert (upto["global_batch"] <= upto["samples_to_train"]).all(), upto[
        ["accelerators", "global_batch", "samples_to_train"]
    ]
    chosen = frame.set_index("accelerators").loc[advice.decision.chosen.accelerators]
    assert chosen["global_batch"] <= 200
