"""One share of a device's memory a run may fill (``data/usable_memory.csv``), read by every
check of what a device holds: the advice's per count and fewest devices, the batch search's
largest batch and the plan's refusal. An 80 GiB device (85.9 GB) holds 77.3 GB."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gpuscale.advice.calibrate.memory import largest_batch
from gpuscale.hardware.capacity import AcceleratorMemory, usable_share
from gpuscale.hardware.memory import Sharding, fewest_devices, memory_at, model_state
from gpuscale.planning.memory import MemoryCheck

EIGHTY_GIB = AcceleratorMemory("H100", 80, "test")
# 5B parameters at Adam's 16 bytes: 80 GB whole, under the 85.9 GB but over the 77.3 usable
FIVE_B = model_state(5e9, "adam", "mixed")


def test_the_share_and_its_source() -> None:
    found = usable_share()
    assert found.share == 0.9
    assert found.source.url == "https://pytorch.org/docs/stable/notes/cuda.html#memory-management"
    assert "caching allocator" in found.source.citation and "CUDA context" in found.source.citation
    assert EIGHTY_GIB.gb == pytest.approx(85.899, abs=1e-3)
    assert EIGHTY_GIB.usable_gb == pytest.approx(77.309, abs=1e-3)


def test_a_state_under_the_device_but_over_its_usable_share_does_not_fit() -> None:
    whole = memory_at(FIVE_B, "ddp", 1, EIGHTY_GIB, per_node=8)
    assert whole.total_gb == pytest.approx(80.0)
    assert (whole.capacity_gb, whole.usable_gb) == (
        pytest.approx(85.899, abs=1e-3),
        pytest.approx(77.309, abs=1e-3),
    )
    assert whole.fits is False
    assert memory_at(FIVE_B, "fsdp", 2, EIGHTY_GIB, per_node=8).fits is True  # 40 GB
    assert fewest_devices(FIVE_B, EIGHTY_GIB, Sharding.DDP) is None
    # ZeRO-2: 10 GB of weights whole, 70 GB sharded: 70 / 67.3 -> 2 devices; with 60 GB of
    # activations beside, 70 / 7.3 -> 10 (the whole device's 15.9 would give 5)
    assert fewest_devices(FIVE_B, EIGHTY_GIB, Sharding.SHARD_GRAD_OP) == 2
    assert fewest_devices(FIVE_B, EIGHTY_GIB, Sharding.SHARD_GRAD_OP, extra_gb=60.0) == 10


def test_the_largest_batch_fills_the_usable_share() -> None:
    """1 GB besides and 1 GB a sample: 76 samples fit 77.3 GB (84 would fill 85.9)."""
    found = largest_batch([(1, 2e9), (2, 3e9)], EIGHTY_GIB.gb * 1e9)
    assert found is not None
    batch, how = found
    assert batch == 76
    assert how["usable_share"] == usable_share().share


def test_the_plan_refuses_a_count_over_the_usable_share() -> None:
    """Fully sharded as an MLPerf LLM's: 80 GB on one device, 40 GB on each of 2."""
    sharded = replace(FIVE_B, sharding=Sharding.FULL_SHARD)
    assert fewest_devices(sharded, EIGHTY_GIB) == 2
    check = MemoryCheck(
        workload="five_b", family="H100", state=sharded, memory=EIGHTY_GIB, fewest=2, per_node=8
    )
    assert check.refusal(1).startswith("no time") and check.refusal(2) == ""
