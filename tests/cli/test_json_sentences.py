"""``-f json`` carries what the terminal says: the rows of ``scores``, ``energy`` and
``trends`` each hold the view's ``headline``, ``said`` and ``notes`` (the top level stays a
list); an empty result keeps a full one's columns and exits 2; ``analyze -f json``'s picks
hold the 95% interval the answer's table shows. Fields compared, not wording."""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

from typer.testing import CliRunner

from gpuscale.analysis.document import PICK_INTERVAL
from gpuscale.tables.views import SENTENCE_KEYS

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def _invoke(*args: str):  # type: ignore[no-untyped-def]
    from gpuscale.cli import app

    return runner.invoke(app, list(args))


def test_energy_rows_carry_the_headline_sentences_and_notes_of_its_view() -> None:
    """v4.0's energy: the least-energy headline, the per-count and AC-vs-DC sentences and
    the notes (no energy per sample) are the library view's, in every row, beside every
    CSV column."""
    from gpuscale import load_round
    from gpuscale.analysis.energy_per_result import energy_view

    tables = load_round("v4.0")
    view = energy_view(tables, sorted(tables.scores["workload"].dropna().unique()))
    result = _invoke("energy", "--round", "v4.0", "-f", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert isinstance(rows, list) and len(rows) == len(view.frame)
    assert view.headline and view.said and view.notes  # the case: all three said
    for row in rows:
        assert row["headline"] == list(view.headline)
        assert row["said"] == list(view.said)
        assert row["notes"] == list(view.notes)
    header = _invoke("energy", "--round", "v4.0", "-f", "csv").stdout.splitlines()[0]
    assert list(rows[0])[: -len(SENTENCE_KEYS)] == header.split(",")


def test_trends_rows_carry_the_largest_change() -> None:
    """trends' headline (the largest change) in each row, the terminal's first line;
    ``said`` empty: its sentences are the rows' ``note`` column, kept."""
    args = ("trends", "--round", "v4.0,v4.1")
    rows = json.loads(_invoke(*args, "-f", "json").stdout)
    terminal = _invoke(*args).stdout.splitlines()
    assert rows and all(len(r["headline"]) == 1 for r in rows)
    assert {r["headline"][0] for r in rows} == {terminal[0]}
    assert all(r["said"] == [] and "note" in r for r in rows)
    assert any(r["note"] for r in rows)


def test_an_empty_result_keeps_a_full_ones_columns_and_exits_2() -> None:
    """energy with no power log: the CSV header of a result with rows, JSON ``[]``, exit 2
    and one ``error:`` line; trends and scores --duplicates with no row exit 2 alike."""
    full = _invoke("energy", "--round", "v4.0", "-f", "csv")
    empty = _invoke("energy", "--round", "v5.0", "-b", "rgat", "-f", "csv")
    assert empty.exit_code == 2 and empty.stderr.startswith("error: ")
    assert list(csv.reader(io.StringIO(empty.stdout))) == [full.stdout.splitlines()[0].split(",")]
    assert len(empty.stdout.split(",")) > 30  # every column, not the terminal's 12
    document = _invoke("energy", "--round", "v5.0", "-b", "rgat", "-f", "json")
    assert document.exit_code == 2 and json.loads(document.stdout) == []
    trends = _invoke("trends", "--round", "v5.0", "-b", "rgat", "--family", "MI300X")
    assert trends.exit_code == 2 and "error: " in trends.stderr
    pairs = _invoke("scores", "--round", "v5.0", "--duplicates", "-f", "csv")
    assert pairs.exit_code == 2 and pairs.stdout.startswith("round,")


def test_analyze_picks_carry_their_systems_interval() -> None:
    """Every pick in ``equilibrium`` and ``equilibrium_by_family`` holds its system's 95%
    interval of the time to train, the ``systems`` row's, around its time."""
    result = _invoke("analyze", "--round", "v4.1", "-b", "bert", "-f", "json")
    assert result.exit_code == 0, result.output
    found = 0
    for workload in json.loads(result.stdout)["rounds"]:
        systems = {(s["system_id"], s["accelerators"]): s for s in workload["systems"]}
        for eq in [workload["equilibrium"], *workload["equilibrium_by_family"]]:
            for criterion in ("knee", "max_speed_x_efficiency", "efficiency_threshold"):
                if (pick := eq[criterion]) is None:
                    continue
                row = systems[(pick["system_id"], pick["accelerators"])]
                low, high = (pick[c] for c in PICK_INTERVAL)
                assert (low, high) == tuple(row[c] for c in PICK_INTERVAL)
                if low is not None:
                    found += 1
                    assert low <= pick["time_to_train_min"] <= high and math.isfinite(high)
    assert found >= 3


def test_analyze_json_carries_the_notes_stderr_says() -> None:
    """``analyze -f json``'s ``notes`` are the analysis' notes (``Analysed.notes``), each
    said on stderr too; the document keeps ``rounds`` and ``bench``."""
    from gpuscale import load_round
    from gpuscale.analysis.analyze import analyze_asked
    from gpuscale.tables.analysis_request import AnalysisOptions

    tables = load_round("v4.1")
    notes = analyze_asked(tables, ["bert"], AnalysisOptions(families=("H100",))).notes
    args = ("analyze", "--round", "v4.1", "-b", "bert", "--family", "H100", "-f", "json")
    result = _invoke(*args)
    document = json.loads(result.stdout)
    assert notes and {"rounds", "bench"} <= set(document) and document["notes"] == notes
    assert all(line in " ".join(result.stderr.split()) for line in notes)


def test_the_schema_pages_name_the_new_keys() -> None:
    """docs/schemas.md names the rows' sentence keys; docs/analysis.md the picks'."""
    schemas = (ROOT / "docs" / "schemas.md").read_text()
    analysis = (ROOT / "docs" / "analysis.md").read_text()
    assert [k for k in SENTENCE_KEYS if f"`{k}`" not in schemas] == []
    assert [k for k in PICK_INTERVAL if f"`{k}`" not in analysis] == []
