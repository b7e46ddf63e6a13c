"""The files ``gpuscale ingest`` and ``gpuscale dataset`` write, read as a data scientist reads
them: a global batch is a whole number (``256``, never ``256.0``), an empty text cell is
missing in Parquet as in CSV (pandas read ``""`` from one and NaN from the other), and a
system name from a log that a spreadsheet would run as a formula (``=HYPERLINK(...)``) is
written to CSV with one leading ``'``, the Parquet keeping it as logged."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.tables.written import as_csv, as_parquet

from .logbuilder import RoundBuilder, system_json

FORMULA = '=HYPERLINK("http://example.com","x")'
NAMES = {
    "system_name": FORMULA,
    "submitter": "-2+3",
    "framework": "+cmd",
    "host_processor_model_name": "@SUM(1)",
}


def _round(parent: Path) -> Path:
    rb = RoundBuilder()
    rb.system("Acme", "box8").runs("Acme", "box8", "bert", [10, 12, 11, 13, 9, 10, 11, 12, 10, 11])
    rb.files["Acme/systems/box8.json"] = json.dumps(system_json(name="box8", **NAMES)).encode()
    return rb.write_dir(parent)


def _read(folder: Path, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    return pd.read_csv(folder / f"{name}.csv"), pd.read_parquet(folder / f"{name}.parquet")


@pytest.mark.parametrize(
    ("command", "tables"),
    [("ingest", ("systems", "runs", "scores")), ("dataset", ("results", "runs"))],
)
def test_written_files_agree_and_are_safe_in_a_spreadsheet(
    tmp_path: Path, command: str, tables: tuple[str, ...]
) -> None:
    out = tmp_path / "out dir"
    written = CliRunner().invoke(app, [command, str(_round(tmp_path)), "--out", str(out)])
    assert written.exit_code == 0, written.output
    for name in tables:
        csv, parquet = _read(out, name)
        assert len(csv) == len(parquet) > 0, name
        # the same cells missing in both files
        assert (csv.isna() == parquet.isna()).all().all(), name
        if "global_batch_size" in parquet:
            assert str(parquet["global_batch_size"].dtype) == "Int64", name
            assert parquet["global_batch_size"].tolist()[0] == 256
            raw = pd.read_csv(out / f"{name}.csv", dtype=str, keep_default_na=False)
            assert set(raw["global_batch_size"]) == {"256"}, name
        for column in ("score_reason", "problem", "same_runs_as"):
            if column in parquet:
                assert parquet[column].isna().all(), (name, column)
        if "system_name" in parquet:
            assert parquet["system_name"].tolist()[0] == FORMULA
            assert csv["system_name"].tolist()[0] == "'" + FORMULA
            assert csv["submitter"].tolist()[0] == "'-2+3"
            # lossless: one leading quote dropped gives back what the Parquet holds
            for column in csv.columns[csv.dtypes.astype(str).isin(["object", "str"])]:
                back = csv[column].str.removeprefix("'")
                assert back.fillna("").tolist() == parquet[column].fillna("").tolist(), column


def test_as_csv_escapes_only_text_and_keeps_a_quote_reversible() -> None:
    frame = pd.DataFrame(
        {
            "name": ["=1+1", "'quoted", "plain", "", "\tx"],
            "time_min": [-1.5, 2.0, 3.0, float("nan"), 4.0],
            "global_batch_size": [256.0, float("nan"), 8.0, 1.0, 2.0],
        }
    )
    csv = as_csv(frame)
    assert csv["name"].tolist()[:3] == ["'=1+1", "''quoted", "plain"]
    assert pd.isna(csv["name"].tolist()[3]) and csv["name"].tolist()[4] == "'\tx"
    assert csv["time_min"].tolist()[0] == -1.5  # numbers are never escaped
    assert str(as_parquet(frame)["global_batch_size"].dtype) == "Int64"
    fractional = frame.assign(global_batch_size=[1.5, 2.0, 3.0, 4.0, 5.0])
    assert str(as_parquet(fractional)["global_batch_size"].dtype) == "float64"  # as logged


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_scores_shows_the_global_batch_as_a_whole_number(tmp_path: Path, fmt: str) -> None:
    shown = CliRunner().invoke(app, ["scores", str(_round(tmp_path)), "-f", fmt, "--all-columns"])
    assert shown.exit_code == 0, shown.output
    if fmt == "json":
        row = json.loads(shown.stdout)[0]
        assert row["global_batch_size"] == 256 and isinstance(row["global_batch_size"], int)
    else:
        raw = pd.read_csv(io.StringIO(shown.stdout), dtype=str, keep_default_na=False)
        assert raw["global_batch_size"].tolist() == ["256"]


@pytest.mark.parametrize(
    "command", [["scores", "--all-columns"], ["analyze", "--bootstrap", "100"]]
)
def test_csv_on_stdout_escapes_formula_text_as_the_files_do(
    tmp_path: Path, command: list[str]
) -> None:
    """``scores -f csv`` printed ``=HYPERLINK(...)`` as logged (the files ``ingest`` writes
    escaped it): every ``-f csv`` on stdout writes a formula's text as the files do."""
    shown = CliRunner().invoke(app, [command[0], str(_round(tmp_path)), *command[1:], "-f", "csv"])
    assert shown.exit_code == 0, shown.output
    row = pd.read_csv(io.StringIO(shown.stdout), dtype=str, keep_default_na=False).iloc[0]
    assert (row["system_name"], row["submitter"]) == ("'" + FORMULA, "'-2+3")
    if "framework" in row:
        assert row["framework"] == "'+cmd"
    assert float(row["time_to_train_min"]) > 0  # numbers are never escaped


def test_csv_records_escape_formula_text_and_tuples_alike() -> None:
    """The CSV of plain records (``plan -f csv``) escapes as a frame's does, a tuple's
    joined items too; numbers, negative ones included, are written as they are."""
    from gpuscale.tables.views import records_csv

    text = records_csv([{"name": "@SUM(1)", "kinds": ("=a", "b"), "delta": -1.5, "empty": None}])
    assert text.splitlines() == ["name,kinds,delta,empty", "'@SUM(1),'=a; b,-1.5,"]


def test_every_column_written_is_documented() -> None:
    """Each column `ingest` and `dataset` write is named, in backticks, on the schema page
    or the tour (the dataset's own columns)."""
    from gpuscale.tables import (
        DATASET_COLUMNS,
        DATASET_RUNS_COLUMNS,
        PROBLEMS_SCHEMA,
        RUNS_SCHEMA,
        SCORES_SCHEMA,
        SYSTEMS_SCHEMA,
    )

    docs = Path(__file__).parents[2] / "docs"
    text = (docs / "schemas.md").read_text() + (docs / "tour.md").read_text()
    written = {*SYSTEMS_SCHEMA, *RUNS_SCHEMA, *SCORES_SCHEMA, *PROBLEMS_SCHEMA}
    written |= {*DATASET_COLUMNS, *DATASET_RUNS_COLUMNS}
    assert sorted(c for c in written if f"`{c}`" not in text) == []
