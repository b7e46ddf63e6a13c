"""JSON depth checked by gpuscale, the same on every Python: 3.11's
``json`` refuses 5,000 nested arrays, 3.12's reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.bench.results import read_results
from gpuscale.cli import app
from gpuscale.sizes import number_or_none
from gpuscale.tables.json_depth import MAX_DEPTH, TooDeep, check_depth, loads

DEEP = "[" * 5000 + "]" * 5000


def test_deep_json_is_refused_whatever_the_interpreter_would_do() -> None:
    with pytest.raises(TooDeep, match="nested too deeply"):
        loads(DEEP)
    with pytest.raises(TooDeep):
        check_depth(DEEP.encode())
    nested = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert loads(nested) == json.loads(nested)  # at the limit: read as json reads it


def test_brackets_in_strings_are_text() -> None:
    text = json.dumps({"name": "[" * 2000, "escaped": '\\"[[[' * 300})
    assert loads(text)["name"] == "[" * 2000


def test_a_deep_bench_row_is_a_skipped_line(tmp_path: Path, monkeypatch) -> None:
    """Even where ``json`` reads the depth (3.12), the row is skipped with the reason."""
    monkeypatch.setattr(json, "loads", lambda *a, **k: {})  # an interpreter that accepts
    path = tmp_path / "results.jsonl"
    path.write_text('{"schema": "gpuscale.bench/2", "deep": ' + DEEP + "}\n")
    records, problems = read_results(path)
    assert records == []
    assert any("nested too deeply" in p for p in problems), problems


@pytest.mark.parametrize(
    "args, words",
    [
        (["advise", "--bench", "{deep}"], "no gpuscale bench results in it"),
        (["analyze", "--bench", "{deep}"], "nested too deeply"),
        (["advise", "--params", "1e6", "--step-ms", "2", "--batch", "32",
          "--collectives", "{deep}"], "no collectives measurement"),
        (["bench", "--backend", "gloo", "--nproc", "1", "--models", "mlp-0.2m",
          "--out", "{deep}"], "is not a file of `gpuscale bench` results"),
        (["collectives", "--backend", "gloo", "--nproc", "2", "--out", "{deep}"],
         "is not a file of `gpuscale collectives` sweeps"),
    ],
)  # fmt: skip
def test_a_deep_first_line_is_said_by_every_command_that_reads_one(
    tmp_path: Path, args: list[str], words: str
) -> None:
    """What a file holds is told from its first line (``first_schema``): one nested
    deeper than ``json`` reads on 3.11 was a RecursionError traceback from every command
    that tells a file's kind (advise, analyze, bench and collectives --out)."""
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 200_000 + "]" * 200_000 + "\n")  # past any interpreter's recursion
    result = CliRunner().invoke(app, [a.format(deep=deep) for a in args])
    assert result.exit_code == 2, result.output
    assert words in " ".join(result.output.split()), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_a_number_is_never_a_bool() -> None:
    read = [number_or_none(v) for v in json.loads('[true, false, 2, 2.5, "2", null]')]
    assert read == [None, None, 2, 2.5, None, None]
    assert [number_or_none(v, whole=True) for v in (True, 2, 2.0)] == [None, 2, None]
