"""The runnable batch (``predict.runnable_batch``): halfway between two, one rule, the
smaller, whatever float rounding does to the halfway value, so the planned batch follows
the assumed one from count to count; model parallel, m samples per k devices nearest in
log; data parallel, a whole per-device batch."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.planning import PlanRequest, plan_for
from gpuscale.planning.cache import default_fits
from gpuscale.planning.predict import (
    batch_grain,
    floor_per_device,
    log2_batch,
    runnable_batch,
)

FITS = default_fits()
CASES = (
    ("gpt3", "TPU-v5p"),
    ("gpt3", "H100-SXM5-80GB"),
    ("llama2_70b_lora", "H100-SXM5-80GB"),
    ("bert", "H100-SXM5-80GB"),
)
NOISE = (1 - 1e-12, 1.0, 1 + 1e-12)


def _assumed(workload: str, family: str, n: int) -> float:
    fit = FITS["workloads"][workload]
    return 2.0 ** log2_batch(fit, fit["families"][family], math.log2(n))


def _planned(workload: str, family: str, n: int, assumed: float | None = None) -> int:
    fit = FITS["workloads"][workload]
    a = _assumed(workload, family, n) if assumed is None else assumed
    return runnable_batch(a, n, floor_per_device(fit))


def test_gpt3_on_tpu_v5p_plans_m_samples_per_4_devices_nearest_in_log() -> None:
    """GPT-3's submissions ran whole samples per 4 devices (1 / 4 and 3 / 4 per device):
    6,144 samples assumed at 8,192 and 10,240 (the workload's typical batch is flat
    there), 0.75 and 0.6 per device, then 0.53 per device beyond the largest count run;
    planned 3 samples per 4 devices (6,144), then 2 per 4 (5,120: 2.4 per 4 is below
    sqrt(2 x 3); 6,144 and 8,192: 2.1 per 4 is nearer 2 in log), each within a factor
    2^(1/2) of the batch assumed."""
    counts = (8192, 10240, 12288, 16384)
    result = plan_for(PlanRequest(workload="gpt3", accelerator="TPU-v5p", devices=counts))
    rows = {int(r["accelerators"]): r for r in result.rows}
    assert [rows[n]["global_batch"] for n in counts] == [6144, 5120, 6144, 8192]
    for n in counts:
        ratio = rows[n]["global_batch"] / rows[n]["assumed_batch"]
        assert abs(math.log2(ratio)) <= 0.5 + 1e-9, n


@pytest.mark.parametrize(
    ("assumed", "n", "batch"),
    [
        (1.5 * 64, 64, 64),  # 1.5 per device: 1 (round-half-even gave 2)
        (2.5 * 64, 64, 128),  # 2.5: 2
        (3.5 * 64 * (1 - 1e-15), 64, 192),  # 3.5 under float rounding: 3
        (3.5 * 64 * (1 + 1e-15), 64, 192),  # and over it: 3
        (64 / math.sqrt(2), 64, 32),  # 1/sqrt(2) per device: 2 devices per sample
        (64 / math.sqrt(8), 64, 16),  # 1/sqrt(8): 4
        (2.5, 5, 2),  # 5 / 2 = 2.5 samples a step: 2 (half-even: 2, but 3.5 gave 4)
        (3.5, 7, 3),
        (0.75 * 64, 64, 64),  # not halfway in log (0.415 octave): the nearest, 1 per device
    ],
)
def test_halfway_gives_the_smaller_batch(assumed: float, n: int, batch: int) -> None:
    assert runnable_batch(assumed, n) == batch


@pytest.mark.parametrize(("workload", "family"), CASES)
@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_the_planned_batch_follows_the_assumed_one_over_n(workload: str, family: str, data):
    """Over counts n1 < n2 (multiples of 64: whole devices per sample): float noise in the
    assumed batch never moves the planned one; an assumed per-device batch that does not
    fall never gives a planned batch that falls (non-decreasing in N, at most a power of
    two cell apart); the same per-device batch assumed at n and 2n plans the same
    per-device batch; and the planned batch is within [2/3, sqrt(2)] of the assumed,
    halfway the smaller (above it, the floor lift only)."""
    fit = FITS["workloads"][workload]
    n1 = 64 * data.draw(st.integers(1, 400), label="n1 / 64")
    n2 = n1 + 64 * data.draw(st.integers(1, 400), label="(n2 - n1) / 64")
    a1, a2 = _assumed(workload, family, n1), _assumed(workload, family, n2)
    b1, b2 = _planned(workload, family, n1), _planned(workload, family, n2)
    for noise in NOISE:
        assert _planned(workload, family, n1, a1 * noise) == b1, (n1, noise)
    if a2 / n2 >= a1 / n1 * (1 - 1e-12):
        assert b2 >= b1, (n1, n2, a1, a2)
    assert runnable_batch(2 * a1, 2 * n1, floor_per_device(fit)) == 2 * b1
    lifted = b1 == math.ceil(n1 * floor_per_device(fit) - 1e-6)
    assert b1 / a1 >= 2 / 3 * (1 - 1e-9)
    assert lifted or b1 / a1 <= math.sqrt(2) * (1 + 1e-9), (n1, a1, b1)


@settings(max_examples=300, deadline=None)
@given(
    per=st.floats(0.0, 7.0),
    groups=st.integers(1, 200),
    grain=st.sampled_from([2, 4, 8, 16, 64]),
)
def test_model_parallel_batch_is_m_samples_per_k_devices_nearest_in_log(
    per: float, groups: int, grain: int
) -> None:
    """Model parallel (``grain`` k > 1), a per-device batch assumed from 1 sample per k
    devices up to 128 per device (``k 2^per / k``), on a count of whole groups of 64: the
    planned batch is ``m`` samples per ``k`` devices (``B k / n`` whole), within a factor
    2^(1/2) of the assumed in log, and no other whole ``m`` is nearer in log."""
    n = 64 * groups
    share = 2.0**per / grain  # per device: 1 / k up to 128 / k
    assumed = share * n
    batch = runnable_batch(assumed, n, 1 / grain, grain)
    assert batch * grain % n == 0, (n, grain, assumed, batch)
    m = batch * grain // n
    assert abs(math.log(batch / assumed)) <= math.log(2) / 2 + 1e-9
    target = share * grain  # m's value before rounding
    for other in (m - 1, m + 1):
        if other >= 1:
            assert abs(math.log(m / target)) <= abs(math.log(other / target)) + 1e-9


@pytest.mark.parametrize("workload", ["bert", "resnet"])
def test_a_data_parallel_workload_keeps_a_whole_per_device_batch(workload: str) -> None:
    """BERT and ResNet ran whole samples per device: grain 1, the nearest whole per-device
    batch at every count none of the family ran (halfway the smaller), unchanged."""
    fit = FITS["workloads"][workload]
    assert batch_grain(fit) == 1
    counts = (3, 12, 20, 24, 96, 100, 1000)
    result = plan_for(PlanRequest(workload=workload, accelerator="H100", devices=counts))
    for row in result.rows:
        n, batch = int(row["accelerators"]), row["global_batch"]
        if row["own_results"] or batch != batch:
            continue
        per = row["assumed_batch"] / n
        assert batch % n == 0 and batch // n == max(1, math.ceil(per - 0.5 - 1e-6)), (n, per)
