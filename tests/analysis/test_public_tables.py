"""``gpuscale.energy_table`` and ``gpuscale.trend_table`` are the ``energy`` and ``trends``
commands as calls: the same rows as their ``-f json``, names read as the commands read
them, a wrong argument refused by name."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.names import UnknownNameError

ROUNDS = ("v4.0", "v4.1", "v5.0")


def command_rows(*args: str) -> pd.DataFrame:
    result = CliRunner().invoke(app, [*args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return pd.DataFrame(json.loads(result.stdout))


def test_trend_table_is_the_trends_command_on_the_same_rounds() -> None:
    tables = gpuscale.load_round(*ROUNDS)
    called = gpuscale.trend_table(tables, "BERT")  # as --benchmark reads it
    shown = command_rows("trends", *(f"--round={r}" for r in ROUNDS), "-b", "bert")
    assert len(called) == len(shown) > 10
    for column in ("accelerator_family", "round", "largest_accelerators", "framework_at_common"):
        assert called[column].tolist() == shown[column].tolist()
    assert called["best_time_at_largest_min"].to_numpy() == pytest.approx(
        shown["best_time_at_largest_min"].to_numpy(), rel=1e-12
    )
    assert set(called["workload"]) == {"bert"} and (called["framework_at_common"] != "").all()
    every = gpuscale.trend_table(tables)  # every workload where none is named
    assert {"bert", "llama2_70b_lora"} <= set(every["workload"])


def test_energy_table_is_the_energy_command_of_the_round() -> None:
    tables = gpuscale.load_round("v4.0")
    called = gpuscale.energy_table(tables, "Bert")
    shown = command_rows("energy", "--round", "v4.0", "-b", "bert")
    assert called["system_name"].tolist() == shown["system_name"].tolist()
    assert called["energy_kj"].to_numpy() == pytest.approx(shown["energy_kj"].to_numpy())
    assert (called["energy_per_sample_j"] > 0).all() and len(called) == 2
    assert len(gpuscale.energy_table(tables)) > len(called)  # every workload's
    none = gpuscale.energy_table(gpuscale.load_round("v4.1"), "bert")  # as the command says
    assert none.empty and "no power logs for bert in v4.1" in none.attrs["why_empty"]
    # a round without power logs says why of every workload too, as the command does
    before = gpuscale.energy_table(gpuscale.load_round("v3.1"))
    assert before.empty and "no power logs in v3.1" in before.attrs["why_empty"]
    # every column of a number a float64 (NaN where none), full or empty
    for frame in (gpuscale.energy_table(tables), before):
        kinds = frame.dtypes.astype(str)
        assert kinds["energy_per_accelerator_hour_kj"] == kinds["energy_kj"] == "float64"
        assert "object" not in set(kinds) and "Float64" not in set(kinds)


def test_a_wrong_name_or_argument_is_refused_by_name() -> None:
    tables = gpuscale.load_round("v4.0")
    with pytest.raises(UnknownNameError, match="bert"):
        gpuscale.energy_table(tables, "bret")
    with pytest.raises(TypeError, match=r"tables must be a gpuscale\.tables\.RoundTables"):
        gpuscale.energy_table(tables.scores, "bert")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="benchmark must be a str"):
        gpuscale.trend_table(tables, 7)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="republished must be True or False"):
        gpuscale.trend_table(tables, "bert", republished="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="closed"):
        gpuscale.trend_table(tables, "bert", division="clo")
