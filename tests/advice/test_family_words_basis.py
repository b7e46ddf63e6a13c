"""The family sentence says what its basis is: an advice from numbers said "the only
member of its family benched in this configuration" with nothing benched, and an FSDP
advice named "its optimizer and DDP times"."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.explain.phrasebook import measured


@pytest.mark.parametrize(
    "strategy, name",
    [("ddp", "DDP"), ("fsdp", "FSDP"), ("zero2", "ZeRO-2"), ("hybrid", "hybrid sharding")],
)
def test_a_family_from_numbers_says_nothing_was_benched(strategy: str, name: str) -> None:
    """Each strategy by its name, as the table's title says it (never ``ZERO2``)."""
    advice = gpuscale.advise(
        params=300e6, step_ms=100, batch=16, interconnect="pcie-phb", strategy=strategy
    )
    line = next(line for line in advice.explanation if line.startswith("For this model's family"))
    assert "from the step given (nothing benched)" in line, line
    assert "benched in this configuration" not in line, line
    assert f"its optimizer and {name} times per parameter" in line, line


@pytest.mark.parametrize("strategy, name", [("zero2", "ZeRO-2"), ("hybrid", "hybrid sharding")])
def test_a_bench_advised_under_another_strategy_names_it(strategy: str, name: str) -> None:
    """DDP runs advised as ZeRO-2 or hybrid: the own-work term and the STRATEGY warning
    name the strategy predicted (never ``ZERO2``, nor FSDP's own work for ZeRO-2's), and
    say that bench, which runs DDP and FSDP only, cannot measure it."""
    bench = Path(__file__).parent / "cpu_tiny_model_gloo.jsonl"
    advice = gpuscale.advise(bench=str(bench), strategy=strategy)
    terms = [a.name for a in advice.assumptions]
    assert f"{name}'s own work" in terms, terms
    (warning,) = [line for line in advice.explanation if line.startswith("STRATEGY:")]
    assert f"plus {name}'s communication and no own work of {name}'s" in warning, warning
    # bench refuses --strategy zero2 and hybrid: neither sentence sends the user to run it
    own = next(a for a in advice.assumptions if a.name == f"{name}'s own work")
    assert f"bench with --strategy {strategy}" not in warning, warning
    how = measured(own.measure)
    assert f"--strategy {strategy} --nproc" not in how, how
    for said in (warning, how):
        assert "gpuscale bench runs --strategy ddp or fsdp only" in said, said


@pytest.mark.parametrize(
    "strategy, name", [("fsdp", "FSDP"), ("zero2", "ZeRO-2"), ("hybrid", "hybrid sharding")]
)
def test_a_sharded_model_without_a_shape_names_its_strategy(strategy: str, name: str) -> None:
    """The note that a model given by --params alone is one FSDP unit names the strategy
    as the table does (never ``fsdp's collectives``)."""
    advice = gpuscale.advise(params=7e9, step_ms=1000, batch=8192, strategy=strategy)
    (line,) = [line for line in advice.explanation if line.startswith("No transformer shape")]
    assert f": {name}'s collectives are charged as one unit a step" in line, line
