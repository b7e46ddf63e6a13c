"""Speedup, efficiency, E', accelerator-hours and the reference rules, by hand."""

from __future__ import annotations

import pandas as pd
import pytest

from gpuscale.analysis.metrics import ReferenceNotFoundError, references, scaling_table
from gpuscale.names import UnknownNameError

from ..golden import Golden
from .tables import scores

BASE = [
    ("a2", "A5000", 2, 100.0),
    ("b2", "A5000", 2, 120.0),
    ("h8", "H100", 8, 10.0),
    ("h64", "H100", 64, 2.0),
]


def row(table: pd.DataFrame, system_id: str) -> pd.Series:
    return table.set_index("system_id").loc[system_id]


def test_study_reference_is_fewest_then_slowest() -> None:
    table = scaling_table(scores(BASE), "bert")
    assert set(table["reference_system_id"]) == {"b2"}
    h8 = row(table, "h8")
    assert h8["speedup"] == pytest.approx(12.0)  # 120 / 10
    assert h8["efficiency"] == pytest.approx(12.0 / 8)
    assert h8["normalized_efficiency"] == pytest.approx(12.0 / (8 / 2))
    assert h8["accelerator_hours"] == pytest.approx(8 * 10 / 60)
    b2 = row(table, "b2")
    assert (b2["speedup"], b2["normalized_efficiency"]) == (1.0, 1.0)


def test_family_reference_compares_within_family() -> None:
    table = scaling_table(scores(BASE), "bert", reference="family")
    assert row(table, "h64")["reference_system_id"] == "h8"
    assert row(table, "h64")["speedup"] == pytest.approx(5.0)
    assert row(table, "h64")["normalized_efficiency"] == pytest.approx(5.0 / 8)
    assert row(table, "a2")["reference_system_id"] == "b2"
    assert {r.system_id for r in references(table)} == {"b2", "h8"}


def test_explicit_reference() -> None:
    table = scaling_table(scores(BASE), "bert", reference="Org/h8")
    assert row(table, "h64")["speedup"] == pytest.approx(5.0)
    assert row(table, "a2")["normalized_efficiency"] == pytest.approx(0.1 / (2 / 8))
    with pytest.raises(ReferenceNotFoundError):
        scaling_table(scores(BASE), "bert", reference="Org/missing")


def test_ties_on_slowest_time_are_deterministic() -> None:
    table = scaling_table(
        scores([("z", "X", 4, 50.0), ("y", "X", 4, 50.0), ("w", "X", 8, 30.0)]), "bert"
    )
    assert set(table["reference_system_id"]) == {"y"}  # sorted by system id among equals


def test_single_system_and_same_counts() -> None:
    single = scaling_table(scores([("s", "X", 8, 5.0)]), "bert")
    assert single.iloc[0]["speedup"] == 1.0 and single.iloc[0]["normalized_efficiency"] == 1.0
    same = scaling_table(scores([("p", "X", 8, 5.0), ("q", "X", 8, 4.0)]), "bert")
    assert row(same, "q")["normalized_efficiency"] == pytest.approx(1.25)


def test_filters_and_empty() -> None:
    with pytest.raises(UnknownNameError, match=r"RetinaNet \('ssd'\) is not in the rounds"):
        scaling_table(scores(BASE), "ssd")  # a workload these scores lack: said, not empty
    # a family the scores lack is refused as the command refuses it (it gave an empty
    # table, as a typo did: `H10O`); filters that match nothing still give one
    with pytest.raises(UnknownNameError, match="unknown accelerator family 'TPU'"):
        scaling_table(scores(BASE), "bert", families=["TPU"])
    assert scaling_table(scores(BASE), "bert", availability="cloud").empty
    only_h100 = scaling_table(scores(BASE), "bert", families=["H100"])
    assert set(only_h100["system_id"]) == {"h8", "h64"}
    assert set(only_h100["reference_system_id"]) == {"h8"}
    unscored = scores([*BASE, ("dead", "H100", 128, float("nan"))])
    assert "dead" not in set(scaling_table(unscored, "bert")["system_id"])


def test_throughput_only_for_sample_counted_benchmarks() -> None:
    bert = scaling_table(scores(BASE), "bert")
    assert row(bert, "h8")["samples_per_s_per_accelerator"] == pytest.approx(1000 / 600 / 8)
    ssd = scaling_table(scores(BASE, workload="ssd"), "ssd")
    assert ssd["samples_per_s_per_accelerator"].isna().all()


def test_a_reference_without_a_score_here_says_where_it_has_one(golden: Golden) -> None:
    """A walk: `analyze -b bert,retinanet --reference Krai/7920T_2xA5000_ssd` said "no
    official score for this benchmark", naming neither the benchmark nor where it has one."""
    from gpuscale import load_round

    every = load_round("v4.1").scores
    krai = every[(every["system_id"] == "7920T_2xA5000_ssd") & every["time_to_train_min"].notna()]
    scored = sorted(krai["workload"].unique())
    assert scored and "retinanet" not in scored  # the data: a reference for BERT alone
    with pytest.raises(ReferenceNotFoundError) as caught:
        scaling_table(every, "retinanet", reference="Krai/7920T_2xA5000_ssd")
    said = str(caught.value)
    assert "retinanet (v4.1)" in said and f"it is scored for {', '.join(scored)}; " in said
    assert "--reference family" not in said  # the way out, as Python and the CLI both read it
    golden.check("analysis/reference_refusals", "scored for another benchmark", said)
