"""The runnable batch halfway between two (``predict.runnable_batch``): one rule, the
smaller, whatever float rounding does to the halfway value, so the planned batch follows
the assumed one from count to count."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.planning import PlanRequest, plan_for
from gpuscale.planning.cache import default_fits
from gpuscale.planning.predict import floor_per_device, log2_batch, runnable_batch

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


def test_gpt3_on_tpu_v5p_plans_the_batch_the_assumed_one_moves_by() -> None:
    """Assumed 5,793 / 3,620 / 4,344 / 5,793 samples (each 1/sqrt(2) of a power of two
    per device: halfway in log): planned 4,096 / 2,560 / 3,072 / 4,096, each the smaller,
    so each step moves the planned batch by the assumed batch's ratio (it was 8,192 /
    2,560 / 3,072 / 8,192: x0.31 and x2.67 against x0.63 and x1.33)."""
    counts = (8192, 10240, 12288, 16384)
    result = plan_for(PlanRequest(workload="gpt3", accelerator="TPU-v5p", devices=counts))
    rows = {int(r["accelerators"]): r for r in result.rows}
    assert [rows[n]["global_batch"] for n in counts] == [4096, 2560, 3072, 4096]
    for lo, hi in itertools.pairwise(counts):
        planned = rows[hi]["global_batch"] / rows[lo]["global_batch"]
        assumed = rows[hi]["assumed_batch"] / rows[lo]["assumed_batch"]
        assert planned == pytest.approx(assumed, rel=1e-9), (lo, hi)


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
