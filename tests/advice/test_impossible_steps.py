"""A new user's walk: ``--params 100k --step-ms 0.001 --batch 1`` (a 1 us training step)
raised no IMPLAUSIBLE flag, and --explain said "Fixed per-step cost: 0.000999 ms, assumed:
a GPU step's fixed cost, 1-20 ms", a value outside its own stated range. A step shorter
than its kernels is flagged like the rate checks (kept out of the recommendation); an
assumed fixed cost the step leaves below its prior's range says so, as data."""

from __future__ import annotations

import json

from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.model import hardware
from gpuscale.advice.model.fixed_cost import GPU_PRIOR
from gpuscale.cli import app

TINY = {"params": 1e5, "batch": 1, "link": "nvlink5"}


def _implausible(advice) -> list[str]:
    return [w for w in advice.decision.warnings if w.startswith("IMPLAUSIBLE")]


def test_the_step_floor_is_its_kernels_at_the_cited_launch_time() -> None:
    # 3 kernels (forward, backward, optimizer) at 2 us each, below NVIDIA's 3.4 us
    assert hardware.MIN_STEP_MS == 0.006


def test_a_step_shorter_than_its_kernels_is_flagged_and_kept_out() -> None:
    # weak scaling: every count has a row, so only the flag keeps them out
    advice = gpuscale.advise(step_ms=0.001, scaling="weak", **TINY)
    assert len(_implausible(advice)) == 1 and advice.calibration.said.implausible
    assert advice.decision.refused and advice.recommended == 1
    assert advice.predictions["accelerators"].max() == 8  # the table is still shown
    # two step times, one of them below the floor: the same flag
    two = gpuscale.advise(step_ms=(0.001, 0.05), **{**TINY, "batch": (1, 8)})
    assert len(_implausible(two)) == 1


def test_a_step_above_the_floor_is_not_flagged_by_it() -> None:
    advice = gpuscale.advise(step_ms=0.05, scaling="weak", **TINY)
    assert _implausible(advice) == [] and not advice.decision.refused


def test_an_assumed_fixed_cost_below_its_prior_says_so_as_data() -> None:
    fixed = gpuscale.advise(step_ms=0.5, **TINY).calibration.model.fixed
    assert fixed.source == "assumed" and fixed.high_ms < GPU_PRIOR.low
    assert fixed.below_prior_ms == GPU_PRIOR.low
    assert fixed.basis["below"] and fixed.basis["cap_ms"] == fixed.high_ms  # not "1-20 ms" alone
    within = gpuscale.advise(step_ms=100, **TINY).calibration.model.fixed
    assert within.below_prior_ms is None and within.low_ms >= GPU_PRIOR.low
    args = ["advise", "--params", "100k", "--step-ms", "0.001", "--batch", "1"]
    result = CliRunner().invoke(app, [*args, "--interconnect", "nvlink5", "-f", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["scaling"]["fixed_cost"]["below_prior_ms"] == GPU_PRIOR.low
    assert document["scaling"]["fixed_cost"]["high_ms"] < GPU_PRIOR.low
    assert document["recommendation"]["warnings"][0].startswith("IMPLAUSIBLE")


def test_a_ddp_replica_larger_than_the_device_is_sharded_not_refused() -> None:
    """A 13B model under DDP on the H100 nvlink4 implies (80 GiB): no DDP count holds its
    16 bytes a parameter (208 GB). That is no implausible input: the memory check prices
    every strategy, and the advice is of ZeRO-2, which holds it from 4 devices
    (26 + 182 / 4 = 71.5 GB), at a count it fits; no count below 4 is chosen."""
    big = {"params": 13e9, "step_ms": 2000, "batch": 1, "link": "nvlink4", "scaling": "weak"}
    ddp = gpuscale.advise(**big)
    assert _implausible(ddp) == [] and not ddp.decision.refused
    assert ddp.memory is not None and ddp.memory.fits_from("ddp") is None
    assert ddp.memory.fits_from("zero2") == 4
    assert ddp.calibration.run.strategy == "zero2"
    assert ddp.recommended is not None and ddp.recommended >= 4
