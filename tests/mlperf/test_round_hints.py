"""A path read as a round its logs contradict is said to be, never renamed silently.

A copy of v4.1 in ``/tmp/x/`` given ``--round v4.0`` would be scored as v4.0, and under
``--round v1.1`` by v1.1's rules (every Llama2 run "noncompliant"), were the round never
questioned. The logs record no round or ruleset version (their
``:::MLLOG`` keys: ``submission_benchmark``, ``_org``, ``_division``, ``_status``,
``_platform``), but their dates and benchmarks bound it (``gpuscale.mlperf.round_hints``).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.mlperf.ingest import read_round
from gpuscale.mlperf.round_hints import PUBLISHED
from gpuscale.tables import RoundTables

from .logbuilder import RoundBuilder

runner = CliRunner()
SEPTEMBER_2024 = dt.datetime(2024, 9, 2, tzinfo=dt.timezone.utc).timestamp() * 1000
SEPTEMBER_2023 = dt.datetime(2023, 9, 15, tzinfo=dt.timezone.utc).timestamp() * 1000


def _copy_of_v41(tmp_path: Path, start_ms: float = SEPTEMBER_2024, name: str = "x") -> Path:
    """A v4.1-like round in a folder whose name says no round: Llama2 70B LoRA and GNN
    (benchmarks of v4.0 and v4.1 alone), run in September 2024 (after v4.0's results)."""
    rb = RoundBuilder(name="training_results_v4.1")
    rb.system("Acme", "box")
    for bench in ("llama2_70b_lora", "gnn"):
        rb.runs("Acme", "box", bench, [30 + k for k in range(10)], start_ms=start_ms)
    path = rb.write_dir(tmp_path)
    return path.rename(tmp_path / name)


def _said(tables: RoundTables) -> list[str]:
    return tables.problems[tables.problems["kind"] == "other round"]["message"].tolist()


def _check(golden, case: str, said: str, path: Path) -> None:  # type: ignore[no-untyped-def]
    golden.check("mlperf/other_round", case, said, paths={str(path.parent): "<tmp>"})


def test_later_logs_read_as_an_earlier_round_are_said_to_be_another_rounds(
    tmp_path: Path, golden
) -> None:
    path = _copy_of_v41(tmp_path)
    (said,) = _said(read_round(path, round_name="v4.0"))
    assert said.startswith(str(path)) and said.index("v4.0") < said.index("v4.1")
    assert "2024-06-12" in said and "2024-09-02" in said  # v4.0 published, the last run
    assert "(--round v4.1)" in said
    _check(golden, "run after the round given was published", said, path)
    (old,) = _said(read_round(path, round_name="v1.1"))  # the benchmarks say it too
    assert "v4.1" in old and "gnn" in old and "llama2_70b_lora" in old
    _check(golden, "benchmarks the round given does not have", old, path)
    assert _said(read_round(path, round_name="v4.1")) == []  # the round its logs say


def test_logs_nothing_contradicts_are_read_as_given_without_a_word(tmp_path: Path, golden) -> None:
    """Krai's v4.1 BERT runs are from September 2023: as v4.0 nothing in them says
    otherwise (v4.0 has BERT, and was published later), so nothing is said."""
    path = _copy_of_v41(tmp_path, start_ms=SEPTEMBER_2023)
    assert _said(read_round(path, round_name="v4.0")) == []
    (later,) = _said(read_round(path, round_name="v5.1"))  # v5.1 has no GNN
    assert "(gnn)" in later and "v4.0 or v4.1" in later  # the benchmark, the rounds it fits
    _check(golden, "a benchmark the round given does not have, two rounds fit", later, path)


def test_a_folder_named_by_another_round_is_said_to_be_one(tmp_path: Path, golden) -> None:
    named = _copy_of_v41(tmp_path, name="training_results_v4.0")
    (said,) = _said(read_round(named))
    assert said.startswith(str(named)) and said.index("v4.0") < said.index("v4.1")
    assert said.endswith(f"({named.name[:-1]}1)")  # the folder's name to give it
    _check(golden, "a folder named by another round", said, named)


@pytest.mark.parametrize("command", ["scores", "analyze", "ingest"])
def test_the_commands_warn_naming_the_path_and_both_rounds(tmp_path: Path, command: str) -> None:
    path = _copy_of_v41(tmp_path)
    args = [command, str(path), "--round", "v4.0"]
    args += ["--out", str(tmp_path / "out")] if command == "ingest" else ["-f", "csv"]
    result = runner.invoke(app, args)
    assert result.exit_code in (0, 1), result.output
    (said,) = _said(read_round(path, round_name="v4.0"))
    assert f"warning: {said}" in result.stderr  # the problem's message, said as a warning


def test_every_published_round_ran_before_its_date() -> None:
    """The dates hold of the rounds as published: every result of the bundled rounds
    started before its round's publication date, and none is said to be another's."""
    import pandas as pd

    from gpuscale.mlperf.bundled import load_round
    from gpuscale.mlperf.round_hints import result_starts

    tables = load_round()
    assert "other round" not in set(tables.problems["kind"])
    for name, runs in tables.runs.groupby("round"):
        latest = max(result_starts(runs.to_dict("records")))
        assert pd.Timestamp(latest, unit="ms").date() <= PUBLISHED[str(name)], name


@pytest.mark.shared
@pytest.mark.slow
def test_the_unbundled_raw_round_says_no_other_round(shared_archive) -> None:
    """v1.1, read as its name says: no ``other round`` (the bundled rounds' problems are
    a fresh ingest's, ``test_bundled``: none there either)."""
    assert _said(read_round(shared_archive("v1.1"))) == []
