"""The bandwidth remedy said "bf16 gradients" where the memory check (--precision mixed, 16
B/param) already holds 2-byte gradients and the communication prices --grad-bytes 4 (AMP
keeps fp32 gradients for DDP's all-reduce): what the remedy names is the exchange's bytes,
and giving the option it names halves those bytes and leaves the memory held as it was."""

from __future__ import annotations

import pytest

import gpuscale

# docs/advice.md's opening request: the gradients' all-reduce decides its count
BY_NUMBERS = {"params": 7e6, "step_ms": 2.0, "batch": 64, "link": "pcie-phb"}


def _remedy(advice) -> str:
    [line] = [s for s in advice.explanation if s.startswith("What would change it:")]
    return line


def test_the_option_the_bandwidth_remedy_names_halves_the_bytes_sent() -> None:
    advice = gpuscale.advise(**BY_NUMBERS)
    assert advice.deciding.change == "bandwidth"  # premise
    assert advice.calibration.model.spec.grad_bytes == 4 * advice.calibration.model.spec.params
    said = _remedy(advice)
    assert "grad_bytes=2" in said and "bf16 gradients" not in said
    halved = gpuscale.advise(**BY_NUMBERS, grad_bytes=2)
    before, after = advice.predictions.iloc[1:], halved.predictions.iloc[1:]
    # the bandwidth part of each count's communication (its latency apart) is halved
    sent = (before["comm_ms"] - before["latency_ms"]) / (after["comm_ms"] - after["latency_ms"])
    assert sent.to_numpy() == pytest.approx(2.0, rel=1e-6)


@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
def test_the_bf16_exchange_leaves_the_memory_held_as_it_was(strategy: str) -> None:
    request = {"params": 7e9, "step_ms": 900.0, "batch": 8, "device_name": "H100"}
    request |= {"link": "nvlink4", "strategy": strategy}
    advice = gpuscale.advise(**request)
    # the memory check's default precision already holds 2-byte gradients
    assert advice.memory.state.gradients_bytes == 2.0
    assert gpuscale.advise(**request, grad_bytes=2).memory == advice.memory
