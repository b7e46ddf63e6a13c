"""A sharded strategy's step holds no DDP term (its ``ddp_ms`` is 0 at every count), so
``--explain`` says no DDP work of it, and its latency cure names its own collectives;
the terminal's ``fits`` column says where devices do not hold the model, while CSV and
JSON keep the booleans."""

from __future__ import annotations

import pytest

import gpuscale
from gpuscale.advice.explain.document import advice_view
from gpuscale.advice.explain.phrasebook import said, strategy_words, term_words
from gpuscale.advice.types import TermId

# llama3-8b by its numbers on H100s: fewer than 4 devices cannot hold it sharded
ASKED = {
    "preset": "llama3-8b",
    "step_ms": 2000,
    "batch": 1,
    "global_batch": 64,
    "device_name": "H100",
    "link": "nvlink4",
}


@pytest.mark.parametrize("strategy", ["fsdp", "zero2", "hybrid"])
def test_a_sharded_step_says_no_ddp_work(strategy: str) -> None:
    advice = gpuscale.advise(strategy=strategy, **ASKED)
    assert advice.calibration.run.strategy == strategy
    assert (advice.predictions["ddp_ms"] == 0).all()
    assert not [line for line in advice.explanation if "DDP's own" in line]
    # the record says what the step uses: the strategy's own work, 0 ms, no DDP prior
    (own,) = [a for a in advice.assumptions if a.term == TermId.DDP]
    assert own.strategy == strategy and own.quantity is not None and own.quantity.value == 0


def test_ddp_says_its_prior() -> None:
    advice = gpuscale.advise(strategy="ddp", **{**ASKED, "preset": "gpt2-xl"})
    assert (advice.predictions["ddp_ms"][1:] > 0).all()
    assert [line for line in advice.explanation if line.startswith("DDP's own work: ")]


def test_the_latency_cure_is_the_strategys() -> None:
    def cures(strategy: str) -> str:
        return term_words("latency", "full", strategy, fewer_messages=True, accum=1)

    assert "DDP" in cures("ddp")
    for strategy in ("fsdp", "zero2", "hybrid"):
        assert "DDP" not in cures(strategy)


def test_the_fits_column_says_no_where_devices_do_not_hold_it() -> None:
    advice = gpuscale.advise(strategy="fsdp", **ASKED)
    fits = advice.predictions.set_index("accelerators")["fits"]
    assert not fits[1] and not fits[2] and fits[4] and fits[8]
    shown = advice_view(advice, terminal=True).frame.set_index("accelerators")["fits"]
    assert shown.to_dict() == {1: "no", 2: "no", 4: "yes", 8: "yes"}
    # CSV: the booleans as they are
    every = advice_view(advice, terminal=False).frame
    assert every["fits"].dtype == bool


@pytest.mark.parametrize("strategy", ["zero2", "hybrid"])
def test_a_sharded_strategy_asked_of_ddp_runs_is_priced_without_ddp_work(strategy: str) -> None:
    """ZeRO-2 or hybrid sharding asked of a bench of DDP runs: the step carries no DDP
    term (0 ms at every count), and the assumption record says so for the strategy asked,
    as FSDP's does, not the DDP prior of runs that were FSDP's."""
    from pathlib import Path

    from gpuscale.advice.types import Source, TermId

    bench = Path(__file__).parent / "h100_resnet50_bf16.jsonl"
    advice = gpuscale.advise(bench=bench, strategy=strategy)
    own = next(a for a in advice.assumptions if a.term == TermId.DDP)
    assert (own.strategy, own.source) == (strategy, Source.ASSUMED)
    assert own.quantity is not None and own.quantity.value == 0.0
    assert (advice.predictions["ddp_ms"] == 0).all()
    assert strategy_words(strategy)["name"] in said(own.basis)
