"""The typed schema of ``gpuscale.tables``: every producer's frames hold the declared
dtypes, the bundled tables included, and numbers stay numbers where a round has none."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from gpuscale.mlperf import bundled_rounds, load_round
from gpuscale.mlperf.ingest import read_round
from gpuscale.tables import (
    PROBLEMS_SCHEMA,
    RUNS_SCHEMA,
    SCORES_SCHEMA,
    SYSTEMS_SCHEMA,
    RoundTables,
    frame_of,
)

from .logbuilder import RoundBuilder

SCHEMAS = {
    "systems": SYSTEMS_SCHEMA,
    "runs": RUNS_SCHEMA,
    "scores": SCORES_SCHEMA,
    "problems": PROBLEMS_SCHEMA,
}


def kind_of(dtype: object) -> str:
    """``str`` for any text dtype (pandas 2 ``object``, pandas 3 ``str``), else its name."""
    name = str(dtype)
    return "str" if name in ("object", "str", "string") else name


def declared(schema: dict[str, str], frame: pd.DataFrame) -> dict[str, str]:
    """The declared dtypes, text taken as whatever text dtype ``frame`` holds."""
    return {c: kind_of(d) if d == "str" else d for c, d in schema.items() if c in frame}


@pytest.mark.parametrize("round_name", bundled_rounds())
def test_bundled_tables_hold_the_declared_dtypes(round_name: str) -> None:
    tables = load_round(round_name)
    for name, schema in SCHEMAS.items():
        frame = getattr(tables, name)
        assert list(frame.columns) == list(schema), name
        found = {c: kind_of(d) for c, d in frame.dtypes.items()}
        if frame.empty:  # an empty table's text and flag columns carry no dtype to check
            found = {c: d for c, d in found.items() if schema[c] in ("float64", "Int64")}
        assert found == {c: d for c, d in declared(schema, frame).items() if c in found}, name


def test_a_round_without_power_logs_keeps_number_columns_numeric(tmp_path: Path) -> None:
    rb = RoundBuilder()
    rb.system("Acme", "box8").runs("Acme", "box8", "bert", [10, 12, 11, 13, 9, 10, 11, 12, 10, 11])
    tables = read_round(rb.write_dir(tmp_path))
    for frame, column in [
        (tables.runs, "energy_kj"),
        (tables.runs, "compute_energy_kj"),
        (tables.scores, "energy_kj"),
    ]:
        assert frame[column].isna().all() and str(frame[column].dtype) == "float64", column
    assert str(tables.systems["accelerators"].dtype) == "Int64"
    assert str(tables.scores["nodes"].dtype) == "Int64"


def test_frame_of_fills_missing_columns_and_casts_once() -> None:
    frame = frame_of(SCORES_SCHEMA, [{"round": "v1", "nodes": 2.0}, {"round": "v1"}])
    assert list(frame.columns) == list(SCORES_SCHEMA)
    assert frame["nodes"].tolist()[0] == 2 and frame["nodes"].isna().tolist() == [False, True]
    assert str(frame["nodes"].dtype) == "Int64"
    assert str(frame["energy_kj"].dtype) == "float64"


def test_empty_tables_are_typed() -> None:
    empty = RoundTables.empty()
    assert str(empty.scores["time_to_train_min"].dtype) == "float64"
    assert str(empty.systems["accelerators"].dtype) == "Int64"
