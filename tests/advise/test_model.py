"""The step model against hand-computed cases, monotonicity, and bad input."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.advise.model import Compute, Link, allreduce_terms, exposed_comm_s, predict_step
from gpuscale.advise.recommend import AdviceInputs, advise, predictions
from gpuscale.interconnect.reference import PRESETS, get_preset

LINK = Link(busbw_gbs=10.0, latency_us=20.0, name="test")
COMPUTE = Compute(forward_ms=10.0, backward_ms=20.0, optimizer_ms=2.0, batch=32)


def test_ring_allreduce_by_hand() -> None:
    # 100 MB on 4 devices, one bucket: 2*3/4 * 1e8 / 1e10 = 15 ms; latency 2*3*20 us.
    terms = allreduce_terms(1e8, 4, LINK, bucket_bytes=1e9)
    assert terms.bandwidth_s == pytest.approx(0.015)
    assert terms.latency_s == pytest.approx(120e-6)
    assert terms.last_bucket_s == pytest.approx(terms.total_s)


def test_buckets_tree_and_single_device() -> None:
    four_buckets = allreduce_terms(1e8, 8, LINK, bucket_bytes=25e6)
    assert four_buckets.latency_s == pytest.approx(4 * 2 * 7 * 20e-6)
    tree = allreduce_terms(1e8, 8, LINK, bucket_bytes=25e6, algorithm="tree")
    assert tree.latency_s == pytest.approx(4 * 2 * math.log2(8) * 20e-6)
    assert allreduce_terms(1e8, 1, LINK).total_s == 0.0


def test_two_level_network() -> None:
    inter = Link(busbw_gbs=40.0, latency_us=5.0)
    fast = Link(busbw_gbs=400.0, latency_us=5.0)
    terms = allreduce_terms(8e8, 16, fast, bucket_bytes=1e9, inter=inter, per_node=8)
    # intra: 2*7/8 * 8e8 / 4e11 ; inter: 2*1/2 * (8e8/8) / 4e10
    assert terms.bandwidth_s == pytest.approx(1.75 * 8e8 / 4e11 + 1e8 / 4e10)
    with pytest.raises(ValueError):
        allreduce_terms(8e8, 12, fast, inter=inter, per_node=8)


def test_overlap_hides_at_most_backward_and_never_the_last_bucket() -> None:
    terms = allreduce_terms(1e8, 2, LINK, bucket_bytes=25e6)  # 4 buckets
    assert exposed_comm_s(terms, backward_s=1.0, overlap=1.0) == pytest.approx(terms.last_bucket_s)
    assert exposed_comm_s(terms, backward_s=0.0, overlap=1.0) == pytest.approx(terms.total_s)
    assert exposed_comm_s(terms, backward_s=1.0, overlap=0.0) == pytest.approx(terms.total_s)


def test_predicted_step_weak_and_strong() -> None:
    one = predict_step(COMPUTE, 4e7, 1, LINK)
    assert one.step_s == pytest.approx(0.032) and one.samples_per_s == pytest.approx(1000)
    strong = predict_step(COMPUTE, 4e7, 4, LINK, strong=True)
    # forward + backward split over 4 devices (30 / 4 ms); the optimizer (2 ms) is not
    assert strong.compute_s == pytest.approx(0.0095)


def test_ddp_overhead_is_paid_at_every_device_count() -> None:
    compute = Compute(
        forward_ms=10.0, backward_ms=20.0, optimizer_ms=2.0, batch=32, ddp_overhead_ms=3.0
    )
    assert compute.total_ms == pytest.approx(35.0)
    assert predict_step(compute, 4e7, 1, LINK).step_s == pytest.approx(0.035)
    strong = predict_step(compute, 4e7, 4, LINK, strong=True)
    assert strong.compute_s == pytest.approx(0.0125)  # 30/4 + 2 + 3 ms
    assert compute.scaled(2.0).total_ms == pytest.approx(70.0)


@settings(max_examples=60, deadline=None)
@given(
    st.floats(1.0, 500.0),
    st.floats(1.01, 10.0),
    st.floats(1e5, 1e10),
    st.sampled_from([2, 4, 8, 64]),
)
def test_more_bandwidth_never_predicts_a_slower_step(
    bw: float, factor: float, grad: float, n: int
) -> None:
    slow = predict_step(COMPUTE, grad, n, Link(busbw_gbs=bw, latency_us=10.0))
    fast = predict_step(COMPUTE, grad, n, Link(busbw_gbs=bw * factor, latency_us=10.0))
    assert fast.step_s <= slow.step_s + 1e-15


@settings(max_examples=40, deadline=None)
@given(st.floats(1e4, 1e9), st.floats(1.01, 10.0))
def test_larger_models_scale_no_worse(params: float, factor: float) -> None:
    """Compute grows with parameters as fast as gradient bytes, and latency does not, so a
    larger model never has a lower predicted speedup (the break-even is well defined)."""

    def speedup(p: float) -> float:
        inputs = AdviceInputs(
            params=p,
            compute=Compute(
                forward_ms=p * 1e-6, backward_ms=2 * p * 1e-6, optimizer_ms=0.1 * p * 1e-6, batch=8
            ),
            link=LINK,
            max_devices=2,
        )
        frame = predictions(inputs)
        return float(frame["speedup"].iloc[-1])

    assert speedup(params * factor) >= speedup(params) - 1e-9


def test_break_even_on_a_slow_link_is_higher() -> None:
    base = {"params": 1e7, "compute": COMPUTE, "max_devices": 8}
    slow = advise(AdviceInputs(link=Link(busbw_gbs=1.0, latency_us=50.0), **base))
    fast = advise(AdviceInputs(link=Link(busbw_gbs=100.0, latency_us=5.0), **base))
    assert slow.break_even_params > fast.break_even_params
    assert fast.fastest >= slow.fastest
    # 40 MB of gradients at 1 GB/s (40 ms) against a 32 ms step; at 100 GB/s, 0.4 ms
    assert slow.dominant_term == "bandwidth" and fast.dominant_term == "compute"
    tiny = advise(
        AdviceInputs(params=1e4, compute=COMPUTE, link=Link(busbw_gbs=100.0, latency_us=20_000.0))
    )
    assert tiny.dominant_term == "latency"
    jittery = Compute(
        forward_ms=10.0,
        backward_ms=20.0,
        optimizer_ms=2.0,
        batch=32,
        step_samples_ms=(10.0, 10.0, 10.0, 90.0),
    )
    waiting = advise(
        AdviceInputs(params=1e4, compute=jittery, link=Link(busbw_gbs=100.0, latency_us=1.0))
    )
    assert waiting.dominant_term == "straggler"
    assert any("Break-even" in line for line in slow.explanation)


def test_cost_and_energy() -> None:
    result = advise(
        AdviceInputs(
            params=1e6,
            compute=COMPUTE,
            link=LINK,
            max_devices=1,
            price_per_device_hour=2.0,
            power_w=500.0,
            samples=3.6e6,
        )
    )
    row = result.predictions.iloc[0]
    assert row["time_to_train_h"] == pytest.approx(1.0)  # 1000 samples/s
    assert row["cost"] == pytest.approx(2.0) and row["energy_kwh"] == pytest.approx(0.5)


def test_no_price_gives_no_cost_rather_than_zero() -> None:
    result = advise(AdviceInputs(params=1e6, compute=COMPUTE, link=LINK, max_devices=2))
    assert result.predictions["cost"].isna().all()


@pytest.mark.parametrize(
    "kwargs",
    [
        {"params": -1.0},
        {"params": 0.0},
        {"max_devices": 0},
        {"target_efficiency": 1.5},
        {"price_per_device_hour": -2.0},
    ],
)
def test_bad_inputs(kwargs: dict) -> None:
    base = {"params": 1e6, "compute": COMPUTE, "link": LINK}
    with pytest.raises(ValueError):
        AdviceInputs(**{**base, **kwargs})
    with pytest.raises(ValueError):
        Link(busbw_gbs=0.0, latency_us=1.0)
    with pytest.raises(ValueError):
        Compute(forward_ms=-1.0, backward_ms=1.0, optimizer_ms=1.0, batch=1)


def test_presets_load() -> None:
    assert {
        "nvlink4",
        "nvlink3",
        "pcie5-x16",
        "pcie4-x16",
        "pcie-phb",
        "pcie-sys",
        "ib-ndr400",
        "ib-hdr200",
        "eth100",
        "eth25",
    } <= set(PRESETS)
    assert all(p.busbw_gbs > 0 and p.latency_us > 0 for p in PRESETS.values())
    with pytest.raises(KeyError, match="known"):
        get_preset("warp-drive")
