"""The optimizer step the words split out of a count's fixed excess (``FixedTerm``) is the
share the step itself charged at that count: ``1/n`` under FSDP and ZeRO-2, one node's
share under hybrid sharding, whole under DDP (``model.step.optimizer_shards``)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.model.priors import read_data
from gpuscale.advice.model.step import optimizer_shards
from gpuscale.advice.search.derive import fixed_term
from gpuscale.hardware.memory import STRATEGIES
from gpuscale.interconnect.network import Link, Network

# the bench file's H100 ResNet-50 (its optimizer step measured), on two nodes of 4
BENCH = Path(__file__).parent / "h100_resnet50_bf16_large.jsonl"
ASKED = dict(bench=str(BENCH), link="nvlink4", nodes=2, gpus_per_node=4, inter_node="ib-ndr400")


@pytest.mark.parametrize("strategy", ["ddp", "zero2", "fsdp", "hybrid"])
def test_the_optimizer_at_a_count_is_the_steps_own_share(strategy: str) -> None:
    advice = gpuscale.advise(strategy=strategy, **ASKED)
    cal, frame = advice.calibration, advice.predictions
    compute, spec = cal.model.compute, cal.model.spec
    for row in frame.itertuples():
        micro = compute.micro_ms(spec, row.batch_per_device)
        charged = row.compute_ms - row.accum * micro  # the optimizer step the row paid
        said = fixed_term(cal, frame, int(row.accelerators)).optimizer_at_focus_ms
        assert math.isclose(said, charged, rel_tol=1e-6, abs_tol=1e-9), (strategy, row)
    whole = fixed_term(cal, frame, 1).optimizer_ms
    assert whole > 0  # measured: the split below is not of nothing
    at_8 = fixed_term(cal, frame, 8).optimizer_at_focus_ms
    expected = {"ddp": whole, "zero2": whole / 8, "fsdp": whole / 8, "hybrid": whole / 4}
    assert math.isclose(at_8, expected[strategy], rel_tol=1e-9)


def test_every_strategy_that_shards_the_optimizer_has_its_own_words() -> None:
    """Where the step splits the optimizer over the devices, the phrasebook's picks on the
    optimizer step have a case of that strategy's (not the default "does not shrink")."""
    network = Network(
        intra=Link.from_preset("nvlink4"), per_node=4, inter=Link.from_preset("ib-ndr400")
    )
    sharded = {s for s in STRATEGIES if optimizer_shards(network, 8, s) > 1}
    assert sharded == {"fsdp", "zero2", "hybrid"}
    phrases = read_data("advice_phrases.json")
    picks = (
        phrases["terms"]["fixed"]["whole"],
        phrases["sentences"]["fixed_costs_line"]["where"],
        phrases["sentences"]["strong_scaling"]["optimizer"],
    )
    for pick in picks:
        assert sharded <= set(pick), pick
        assert all(pick[s] != pick["*"] for s in sharded)
