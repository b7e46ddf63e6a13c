"""Issue 25: the public functions check their arguments; an unknown name is an error
naming the valid choices, never an empty result."""

from __future__ import annotations

import pytest

import gpuscale
from gpuscale.analysis.analyze import analyze
from gpuscale.analysis.metrics import scaling_table
from gpuscale.mlperf.bundled import load_round


@pytest.fixture(scope="module")
def tables():
    return load_round("v4.1")


def test_load_round_names_its_parameter() -> None:
    with pytest.raises(TypeError, match="rounds"):
        load_round(None)  # type: ignore[arg-type]


def test_scaling_table_refuses_an_unknown_benchmark(tables) -> None:
    with pytest.raises(ValueError, match=r"nosuch.*bert"):
        scaling_table(tables.scores, "nosuch")
    assert len(scaling_table(tables.scores, "bert")) > 0


def test_analyze_refuses_a_string_for_a_list_and_unknown_names(tables) -> None:
    with pytest.raises(TypeError, match="workloads"):
        analyze(tables, "bert")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="nosuch"):
        analyze(tables, ["nosuch"])


@pytest.mark.parametrize("name", ["batch", "nodes", "gpus_per_node"])
def test_advise_refuses_a_zero_count(name) -> None:
    # the one-line wording of every refused value (adc237a): the field, its value, the rule
    with pytest.raises(ValueError, match=f"invalid {name} 0: must be a positive"):
        gpuscale.advise(params=7e6, step_ms=20, link="pcie-phb", **{name: 0})
