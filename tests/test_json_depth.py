"""JSON depth checked by gpuscale, the same on every Python (issue 41 item 9): 3.11's
``json`` refuses 5,000 nested arrays, 3.12's reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscale.bench.results import read_results
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
