"""The step model against hand-computed cases, and the properties it must keep."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.advice.model.network import MIB, StepTerms, bucket_plan, collectives, using
from gpuscale.advice.model.step import Compute, ModelSpec, step_at
from gpuscale.interconnect.network import CommCurve, Link, Network

PHB = Link(busbw_gbs=10.0, latency_us=20.0, name="phb")


def test_ring_time_by_hand() -> None:
    # 2(n-1)/n * 100 MB / 10 GB/s + 2(n-1) * 20 us, n = 4
    assert Network(intra=PHB).time_s(100e6, 4) == pytest.approx(1.5 * 0.01 + 6 * 20e-6)
    assert Network(intra=PHB).time_s(100e6, 1) == 0.0
    # all-gather and reduce-scatter move half an all-reduce's bytes each
    assert Network(intra=PHB).time_s(100e6, 4, "all_gather") == pytest.approx(
        Network(intra=PHB).time_s(100e6, 4) / 2
    )


def test_ddp_buckets_are_mib_with_a_1_mib_first_bucket() -> None:
    plan = bucket_plan(100 * MIB, 25.0)
    assert plan == [(MIB, 1), (25 * MIB, 3), (24 * MIB, 1)]
    assert sum(size * count for size, count in plan) == 100 * MIB
    assert bucket_plan(0.5 * MIB) == [(0.5 * MIB, 1)]
    assert bucket_plan(0) == []


def test_curve_interpolates_in_log_log_and_extends_at_its_bandwidth() -> None:
    curve = CommCurve("all_reduce", 2, (1e3, 1e6), (1e-4, 1e-3))
    assert curve.time_s(1e3) == pytest.approx(1e-4)
    # halfway in log size is halfway in log time
    assert curve.time_s(math.sqrt(1e9)) == pytest.approx(math.sqrt(1e-7))
    assert curve.time_s(10.0) == pytest.approx(1e-4)  # below: the smallest size's time
    assert curve.time_s(4e6) == pytest.approx(4e-3)  # above: at the largest's bandwidth


def test_network_uses_the_curve_at_its_rank_count_and_converts_to_others() -> None:
    curve = CommCurve("all_reduce", 2, (1e3, 1e8), (1e-4, 1e-2))
    net = Network(intra=PHB, curves=(curve,))
    assert net.time_s(1e8, 2) == pytest.approx(1e-2)
    # 4 ranks: the ring moves 2(4-1)/4 / (2(2-1)/2) = 1.5x the bytes per rank
    assert net.time_s(1e8, 4) == pytest.approx(1.5e-2)
    assert Network(intra=PHB, curves=(curve,), comm_scale=2.0).time_s(1e8, 2) == pytest.approx(2e-2)


def test_multi_node_is_one_ring_through_the_slowest_level() -> None:
    nvlink = Link(busbw_gbs=370.8, latency_us=10.0)
    nic = Link(busbw_gbs=48.0, latency_us=6.0)
    net = Network(intra=nvlink, per_node=8, inter=nic)
    size, n = 1e9, 32
    # bottleneck min(370.8, 8 NICs x 48 = 384) = 370.8 GB/s, one ring over 32 ranks;
    # latency: tree 2 (log2(4) x 6 + 7 x 10) = 164 us beats ring 2 (3 x 6 + 28 x 10)
    expected = 2 * 31 / 32 * size / 370.8e9 + 164e-6
    assert net.time_s(size, n) == pytest.approx(expected)
    serial = 2 * 7 / 8 * size / 370.8e9 + 2 * 3 / 4 * (size / 8) / 48e9
    assert net.time_s(size, n) < serial  # the two levels are not added
    # with one NIC per node the NIC is the bottleneck
    one_nic = Network(intra=nvlink, per_node=8, inter=nic, nics_per_node=1)
    assert one_nic.time_s(size, n) == pytest.approx(2 * 31 / 32 * size / 48e9 + 164e-6)
    inside = Network(intra=nvlink).time_s(size, 8)
    assert net.time_s(size, 8) == pytest.approx(inside)  # inside a node


def test_fsdp_gathers_twice_and_scatters_once() -> None:
    """Never hidden: the first unit's forward all-gather (no compute precedes it) and the
    last unit's reduce-scatter (ready when backward ends); with one unit, the whole
    model's: the forward had nothing to hide its gather behind (it was hidden, leaving
    the reduce-scatter alone exposed: 58.3 of 175 ms for a 7B model on 2 A100s)."""
    link = Link(busbw_gbs=10.0, latency_us=0.0)
    net = Network(intra=link)
    total, unhidden = collectives(net, 1e8, 2, bucket_mb=25.0, strategy="fsdp")[:2]
    gather, scatter = net.time_s(1e8, 2, "all_gather"), net.time_s(1e8, 2, "reduce_scatter")
    assert total == pytest.approx(1.5 * net.time_s(1e8, 2))
    assert unhidden == pytest.approx(gather + scatter)
    # 32 units: one unit's gather and one unit's scatter, 1/32 of each
    total, unhidden = collectives(net, 1e8, 2, bucket_mb=25.0, strategy="fsdp", units=32)[:2]
    assert total == pytest.approx(1.5 * net.time_s(1e8, 2))
    assert unhidden == pytest.approx((gather + scatter) / 32)
    with pytest.raises(ValueError, match="ddp, fsdp, zero2 or hybrid"):
        collectives(net, 1e8, 2, bucket_mb=25.0, strategy="zero3")[:2]


def test_zero2_moves_ddps_volume_and_hybrid_within_a_node_is_fsdp() -> None:
    """ZeRO-2: a reduce-scatter and an all-gather, DDP's all-reduce volume (ZeRO paper,
    section 7.2.1); hybrid sharding on one node: FSDP's collectives."""
    link = Link(busbw_gbs=10.0, latency_us=0.0)
    net = Network(intra=link)
    total, last = collectives(net, 1e8, 4, bucket_mb=25.0, strategy="zero2")[:2]
    assert total == pytest.approx(net.time_s(1e8, 4))
    assert last == pytest.approx(net.time_s(1e8, 4, "all_gather"))  # after the step
    hybrid = collectives(net, 1e8, 4, bucket_mb=25.0, strategy="hybrid")[:2]
    assert hybrid == pytest.approx(collectives(net, 1e8, 4, bucket_mb=25.0, strategy="fsdp")[:2])


MODEL = ModelSpec(params=25e6, flops_per_sample=1e9)  # 100 MB of fp32 gradients
COMPUTE = Compute(tflops=1.0, fixed_ms=2.0, opt_ms_per_mparam=0.2, ddp_ms_per_mparam=0.04)


def test_hybrid_shards_over_one_node_for_its_optimizer_and_its_collectives() -> None:
    """Hybrid sharding on 2 nodes of 4: the optimizer step split 4 ways, FSDP's collectives
    over 4 ranks and the node's quarter of the gradients all-reduced over all 8."""
    link = Link(busbw_gbs=10.0, latency_us=0.0)
    nodes = Network(intra=link, per_node=4, inter=Link(busbw_gbs=5.0, latency_us=0.0))
    step = step_at(MODEL, COMPUTE, nodes, 8, batch=8, strategy="hybrid", overlap=0.0)
    # 8 ms of work + 2 ms fixed, and the optimizer's 0.2 ms x 25 split over a node's 4
    assert step.compute_ms == pytest.approx(10 + 5 / 4)
    within = 2 * nodes.time_s(1e8, 4, "all_gather") + nodes.time_s(1e8, 4, "reduce_scatter")
    across = nodes.time_s(1e8 / 4, 8)
    assert step.comm_ms == pytest.approx((within + across) * 1e3)


def test_compute_by_hand() -> None:
    # k (fixed + b F / R) + opt P: 2 (2 + 8 x 1e9 / 1e12 s = 8 ms) + 0.2 x 25
    assert COMPUTE.compute_ms(MODEL, 8, accum=2) == pytest.approx(2 * (2 + 8) + 5)
    assert MODEL.grad_bytes == 100e6
    assert ModelSpec(params=1e6).flops == 6e6  # 2 forward + 4 backward per parameter


def test_step_counts_overlap_and_ddp_overhead_once() -> None:
    net = Network(intra=PHB)
    with using(StepTerms()):  # the fitted wait off: the step is its communication and DDP's
        step = step_at(MODEL, COMPUTE, net, 2, batch=8, overlap=0.6)
    comm_ms = (
        sum(count * Network(intra=PHB).time_s(size, 2) for size, count in bucket_plan(100e6)) * 1e3
    )
    assert step.comm_ms == pytest.approx(comm_ms)
    assert step.exposed_ms == pytest.approx(0.4 * comm_ms)  # 0.6 hidden behind backward
    assert step.ddp_ms == pytest.approx(1.0)  # 0.04 ms per million parameters
    assert step.step_ms == pytest.approx(step.compute_ms + 1.0 + 0.4 * comm_ms)
    one = step_at(MODEL, COMPUTE, net, 1, batch=8)
    assert one.step_ms == one.compute_ms  # no DDP on one device


def test_the_default_hiding_is_capped_by_backward_and_spares_the_last_bucket() -> None:
    net = Network(intra=Link(busbw_gbs=0.5, latency_us=0.0))  # slow: comm >> backward
    step = step_at(MODEL, COMPUTE, net, 2, batch=8)
    backward = COMPUTE.backward_share * (2 + 8)
    # the fitted kappa: what backward hides costs it that share (a link of no class: the
    # classes' median)
    kappa = collectives(net, MODEL.grad_bytes, 2, bucket_mb=25.0, strategy="ddp").contention_share
    assert step.exposed_ms == pytest.approx(step.comm_ms - (1 - kappa) * backward)
    # a measured overlap is what the run hid, timed: all of it hidden is none exposed
    measured = step_at(MODEL, COMPUTE, net, 2, batch=8, overlap=1.0)
    assert measured.exposed_ms == pytest.approx(0.0)
    fast = Network(intra=Link(busbw_gbs=1000.0, latency_us=0.0))
    default = step_at(MODEL, COMPUTE, fast, 2, batch=8)
    ddp = collectives(fast, MODEL.grad_bytes, 2, bucket_mb=25.0, strategy="ddp")
    last_ms = ddp.unhidden_s * 1e3
    # DDP's pipeline (the assumed overlap, 1): a backward longer than the communication
    # hides all of it but the last bucket, which is ready only when the backward ends
    assert default.comm_ms - last_ms < COMPUTE.backward_share * (2 + 8)
    assert default.exposed_ms == pytest.approx(last_ms + kappa * (default.comm_ms - last_ms))


def test_wait_is_expected_max_minus_mean_or_the_measured_slowdown() -> None:
    jittery = Compute(tflops=1.0, jitter_ms=(1.0, 3.0), jitter_ref_ms=2.0)
    # max of two draws of {1, 3}: 3 unless both are 1 (1/4): 2.5; mean 2
    assert jittery.wait_ms(2, 2.0) == pytest.approx(0.5)
    assert jittery.wait_ms(2, 4.0) == pytest.approx(1.0)  # scaled with the compute
    measured = Compute(tflops=1.0, jitter_ms=(1.0, 3.0), jitter_ref_ms=2.0, slowdown=((2, 1.3),))
    assert measured.wait_ms(2, 10.0) == pytest.approx(3.0)
    assert measured.wait_ms(4, 2.0) > 0  # unmeasured N: the jitter model


@settings(max_examples=60, deadline=None)
@given(
    jitter=st.lists(st.floats(0.0, 50.0), min_size=2, max_size=8),
    slowdown=st.floats(1.0, 3.0),
    measured_at=st.sampled_from([2, 4]),
)
def test_the_wait_never_shrinks_as_devices_are_added(jitter, slowdown, measured_at) -> None:
    """A user walk: a CPU bench measured the wait at N = 2 (49.2 ms), and 4 devices were
    predicted a faster step than 2 (190 vs 214 ms) because N = 4 fell back to the much
    smaller E[max] of the N = 1 jitter. E[max of n] grows with n; so must the wait."""
    compute = Compute(
        tflops=1.0,
        jitter_ms=tuple(jitter),
        jitter_ref_ms=20.0,
        slowdown=((measured_at, slowdown),),
    )
    waits = [compute.wait_ms(n, 20.0) for n in (2, 4, 8, 16)]
    assert all(a <= b + 1e-9 for a, b in itertools.pairwise(waits))


@settings(max_examples=200, deadline=None)
@given(
    slowdown=st.dictionaries(st.sampled_from([2, 3, 4, 8, 16]), st.floats(0.5, 4.0), max_size=4),
    jitter=st.lists(st.floats(0.0, 50.0), max_size=6),
    overlap=st.one_of(st.none(), st.floats(0.0, 1.0)),
    bw=st.floats(0.01, 1000.0),
    backward_share=st.floats(0.0, 1.0),
)
def test_the_step_never_shrinks_as_devices_are_added(
    slowdown, jitter, overlap, bw, backward_share
) -> None:
    """A user walk: with contention measured at N = 2, 4 devices were predicted a faster
    step than 2 (15.1 vs 16.5 ms). The no-sync slowdowns the bench measures may take any
    shape (x3 at N = 2, x1.05 at N = 4: noise of one run); the predicted step, and its
    compute + wait, never shrink as devices are added."""
    compute = Compute(
        tflops=1.0,
        fixed_ms=2.0,
        opt_ms_per_mparam=0.2,
        ddp_ms_per_mparam=0.1,
        backward_share=backward_share,
        jitter_ms=tuple(jitter),
        jitter_ref_ms=10.0,
        slowdown=tuple(sorted(slowdown.items())),
    )
    network = Network(intra=Link(busbw_gbs=bw, latency_us=10.0))
    steps = [
        step_at(MODEL, compute, network, n, batch=8, overlap=overlap)
        for n in (1, 2, 3, 4, 6, 8, 16, 32)
    ]
    for fewer, more in itertools.pairwise(steps):
        assert fewer.compute_ms + fewer.wait_ms <= more.compute_ms + more.wait_ms + 1e-9
        assert fewer.step_ms <= more.step_ms + 1e-9, (fewer, more)


def test_a_count_between_measured_ones_is_interpolated_never_below_the_one_below() -> None:
    """Measured x1.5 at N = 2 and x2.5 at N = 8, no spread at N = 1: N = 4 lies halfway
    in log N (x2), not back at N = 1's x1; a count measured faster than fewer devices
    were is held at their slowdown; above the largest count the largest is held."""
    compute = Compute(tflops=1.0, slowdown=((2, 1.5), (8, 2.5), (16, 1.2)))
    assert compute.wait_ms(4, 10.0) == pytest.approx(10.0)
    assert compute.wait_ms(16, 10.0) == pytest.approx(15.0)
    assert compute.wait_ms(64, 10.0) == pytest.approx(15.0)
    # below the smallest measured count: interpolated from N = 1 (x1 by definition)
    only_four = Compute(tflops=1.0, slowdown=((4, 3.0),))
    assert only_four.wait_ms(2, 10.0) == pytest.approx(10.0)


@settings(max_examples=60, deadline=None)
@given(
    bw=st.floats(0.1, 1000.0),
    factor=st.floats(1.0, 100.0),
    n=st.sampled_from([2, 3, 4, 8, 64]),
    overlap=st.floats(0.0, 1.0),
)
def test_more_bandwidth_never_predicts_a_slower_step(bw, factor, n, overlap) -> None:
    slow = Network(intra=Link(busbw_gbs=bw, latency_us=10.0))
    fast = Network(intra=Link(busbw_gbs=bw * factor, latency_us=10.0))
    a = step_at(MODEL, COMPUTE, slow, n, batch=8, overlap=overlap)
    b = step_at(MODEL, COMPUTE, fast, n, batch=8, overlap=overlap)
    assert b.step_ms <= a.step_ms + 1e-9


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 256), batch=st.integers(1, 512), overlap=st.floats(0.0, 1.0))
def test_step_is_positive_and_never_faster_than_its_compute(n, batch, overlap) -> None:
    step = step_at(MODEL, COMPUTE, Network(intra=PHB), n, batch=batch, overlap=overlap)
    assert math.isfinite(step.step_ms) and step.step_ms >= step.compute_ms > 0
    assert step.exposed_ms <= step.comm_ms + 1e-9
    one = step_at(MODEL, COMPUTE, Network(intra=PHB), 1, batch=batch)
    # throughput never super-linear
    assert step.samples_per_s <= n * one.samples_per_s * (1 + 1e-9)


@pytest.mark.parametrize(
    "make",
    [
        lambda: Link(busbw_gbs=0.0, latency_us=1.0),
        lambda: Link(busbw_gbs=float("inf"), latency_us=1.0),
        lambda: Link(busbw_gbs=1.0, latency_us=-1.0),
        lambda: ModelSpec(params=0),
        lambda: ModelSpec(params=1e6, grad_bytes_per_param=3),
        lambda: Compute(tflops=0.0),
        lambda: Compute(tflops=1.0, fixed_ms=-1.0),
        lambda: Network(intra=PHB, comm_scale=0.0),
        lambda: step_at(MODEL, COMPUTE, Network(intra=PHB), 2, batch=8, overlap=1.5),
        lambda: Link.from_preset("warp-drive"),
    ],
)
def test_bad_inputs_are_value_errors(make) -> None:
    with pytest.raises(ValueError):
        make()
