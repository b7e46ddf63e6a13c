"""Eight GPUs by numbers (issue 41 item 8): DDP's own work and the slowest device's wait
enter as priors with their sources, their range in the interval, and the input pipeline's
rate is said."""

from __future__ import annotations

from dataclasses import replace

import gpuscale
from gpuscale.advice.explain.phrasebook import said as words
from gpuscale.advice.model.priors import DDP_WORK, STEP_SPREAD, StepError
from gpuscale.advice.search.decide import search
from gpuscale.advice.types import FindingKind as K
from gpuscale.advice.types import TermId


def _resnet50_on_a_dgx():
    # one A100's published 938 img/s at batch 256, typed as numbers
    return gpuscale.advise(
        params=25.6e6,
        flops_per_sample=12.3e9,
        step_ms=256 / 938 * 1e3,
        batch=256,
        link="nvlink3",
        device_name="A100 SXM4",
        max_devices=8,
        scaling="weak",
    )


def test_each_prior_is_named_with_its_source() -> None:
    advice = _resnet50_on_a_dgx()
    said = {a.term: a for a in advice.assumptions}
    ddp, wait = said[TermId.DDP], said[TermId.WAIT]
    assert "PyTorch DDP paper" in ddp.basis and "one-H100" in ddp.basis
    assert wait.basis.kind == K.SPREAD_FITTED  # the prior's source, then the spread fitted
    assert "Chen et al. 2016" in wait.basis["basis"] and "Horovod" in wait.basis["basis"]
    for a, prior in ((ddp, DDP_WORK), (wait, STEP_SPREAD)):  # each said with its range
        assert a.value.kind == K.PRIOR_VALUE
        assert (a.value["low"], a.value["high"]) == (a.quantity.low, a.quantity.high)
        copies = a.quantity.copies_ms or 0.0  # DDP's bucket copies, priced at each end
        assert (a.quantity.low, a.quantity.high) == (prior.low + copies, prior.high + copies)
    eight = advice.predictions.set_index("accelerators").loc[8]
    assert eight["ddp_ms"] > 0 and eight["wait_ms"] > 0
    # the input pipeline: the rate the largest count needs, read off its row
    pipeline = words(said[TermId.INPUT].value)
    assert f"{eight['samples_per_s']:,.0f} samples/s in all at 8 devices" in pipeline
    assert f"{eight['samples_per_s'] / 8:,.0f} per process" in pipeline


def test_the_priors_narrow_the_interval_around_their_point() -> None:
    advice = _resnet50_on_a_dgx()
    inputs = advice.calibration
    bare = replace(inputs.model.compute, ddp_ms_per_mparam=0.0, jitter_ms=(), jitter_ref_ms=0.0)
    before = search(
        inputs.at({"model": {"compute": bare, "prior_range": (), "error": StepError()}})
    )
    now = advice.predictions.set_index("accelerators").loc[8]
    then = before.table.set_index("accelerators").loc[8]
    assert now["speedup"] < then["speedup"]  # what the numbers set to zero now costs
    assert now["speedup_low"] <= now["speedup"] <= now["speedup_high"]
    assert now["speedup_high"] - now["speedup_low"] < then["speedup_high"] - then["speedup_low"]


def test_a_3b_models_ddp_work_is_its_bucket_copies_not_a_rate_per_parameter() -> None:
    """A 3B-parameter LLM (the largest kind DDP holds on an 80 GB H100 with Adam: 48 GB of
    states), 860 ms a step at batch 8 on one H100 (4,096-token samples, 6 x parameters per
    token): DDP's own work is its bucket copies, 4 bytes per gradient byte, 12 GB x 4 at
    3,350 GB/s, about 14 ms, never the small models' rate per parameter (0.069 ms) carried
    to 3B (207 ms). A 7B model is not held by DDP there (test_memory.py)."""
    advice = gpuscale.advise(
        params=3e9,
        flops_per_sample=6 * 3e9 * 4096,
        step_ms=860,
        batch=8,
        device_name="H100 SXM",
        link="nvlink4",
        max_devices=8,
    )
    two = advice.predictions.set_index("accelerators").loc[2]
    assert 0 < two["ddp_ms"] < 0.025 * 860  # a few % of the one-device step, not 24%
    assert advice.decision.limit.dominant_term != TermId.DDP
    assert advice.recommended is not None and advice.recommended > 1
    (ddp,) = [a for a in advice.assumptions if a.term == TermId.DDP]
    assert ddp.source == "prior" and ddp.value["said_as"].kind == K.DDP_COPIES
    # the record's number is what the steps price: the prior's rest and the copies
    assert ddp.quantity is not None and ddp.quantity.copies_ms is not None
    assert abs(ddp.quantity.value - two["ddp_ms"]) < 1e-9
    assert ddp.quantity.low < ddp.quantity.value < ddp.quantity.high
    assert 0 < ddp.quantity.copies_ms < ddp.quantity.value


def test_a_sharded_strategy_lists_no_ddp_work_its_steps_do_not_price() -> None:
    """A 7B model on H100s under FSDP or ZeRO-2 (asked, or advised for memory): the steps
    price no DDP work, and the record of that term says 0 ms, the strategy's, no copies."""
    for asked in ("fsdp", "zero2", None):
        advice = gpuscale.advise(
            params=7e9,
            step_ms=900,
            batch=4,
            global_batch=64,
            device_name="H100",
            link="nvlink4",
            strategy=asked,
        )
        taken = advice.calibration.run.strategy
        assert taken != "ddp"
        assert (advice.predictions["ddp_ms"] == 0).all()
        (own,) = [a for a in advice.assumptions if a.term == TermId.DDP]
        assert own.strategy == taken and own.quantity is not None
        assert own.quantity.value == 0 and own.quantity.copies_ms is None
        assert "copies" not in words(own.value)


def test_the_bucket_copies_say_whose_memory_bandwidth_they_are_priced_at() -> None:
    """The copies are priced at the device's memory bandwidth where the catalogue records
    it, else at an H100 SXM's: for no device named, and for a device named that the
    catalogue holds no bandwidth for (an A10G, a Gaudi2), which is not "no device named"."""
    cases = {"H100 SXM": ("own", 3350.0), None: ("unnamed", 3350.0)}
    cases |= {"a10g": ("unrecorded", 3350.0), "RTX 4090": ("own", 1008.0)}
    for name, (whose, bandwidth) in cases.items():
        advice = gpuscale.advise(params=7e6, step_ms=2, batch=64, device_name=name)
        (ddp,) = [a for a in advice.assumptions if a.term == TermId.DDP]
        found = ddp.value["said_as"]
        assert found.kind == K.DDP_COPIES
        assert (found["named"], found["bandwidth"]) == (whose, bandwidth), name
        assert found["device"] == name
