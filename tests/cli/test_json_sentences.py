"""``-f json`` of ``scores``, ``energy`` and ``trends`` is their rows (the top level a
list), the terminal's headline and sentences said on stderr; an empty result exits 2 with
nothing on stdout; ``analyze -f json``'s picks hold the 95% interval the answer's
table shows. Fields compared, not wording."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.analysis.document import PICK_INTERVAL

runner = CliRunner()
ROOT = Path(__file__).resolve().parents[2]


def _invoke(*args: str):  # type: ignore[no-untyped-def]
    from gpuscale.cli import app

    return runner.invoke(app, list(args))


def _flat(text: str) -> str:
    return " ".join(text.split())  # stderr folds long lines at the terminal's width


def test_energy_json_is_its_rows_and_its_words_go_to_stderr() -> None:
    """v4.0's energy: stdout is the rows (every CSV column, by name), stderr the library
    view's least-energy headline, its per-count and AC-vs-DC sentences and its notes."""
    from gpuscale import load_round
    from gpuscale.analysis.energy_per_result import energy_view

    tables = load_round("v4.0")
    view = energy_view(tables, sorted(tables.scores["workload"].dropna().unique()))
    result = _invoke("energy", "--round", "v4.0", "-f", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert isinstance(rows, list) and len(rows) == len(view.frame)
    header = _invoke("energy", "--round", "v4.0", "-f", "csv").stdout.splitlines()[0]
    assert all(list(row) == header.split(",") for row in rows)
    assert view.headline and view.said and view.notes  # the case: all three said
    said = _flat(result.stderr)
    assert all(_flat(line) in said for line in (*view.headline, *view.said, *view.notes))


def test_trends_json_says_the_largest_change_on_stderr() -> None:
    """trends' headline (the largest change), the terminal's first line, is the first line
    of stderr under -f json; its other sentences are the rows' ``note`` column."""
    args = ("trends", "--round", "v4.0,v4.1")
    result = _invoke(*args, "-f", "json")
    rows = json.loads(result.stdout)
    terminal = _invoke(*args).stdout.splitlines()
    assert rows and terminal[0].startswith("largest change")
    assert _flat(terminal[0]) in _flat(result.stderr)
    assert any(r["note"] for r in rows)


def test_trends_json_carries_the_change_at_a_count_both_rounds_ran() -> None:
    """v3.0 -> v5.0 BERT: H100-SXM5-80GB's common count moved (8 -> 64), so the headline
    states the change at a count both rounds ran; -f json's v5.0 row of that family holds
    it as numbers (the round before, the count, both best times), each time the least
    closed-division time to train of that family at that count in that round's scores,
    and the headline's numbers are that row's."""
    from gpuscale import load_round
    from gpuscale.quantities import format_minutes

    args = ("trends", "--round", "v3.0,v5.0", "-b", "bert", "-f", "json")
    result = _invoke(*args)
    assert result.exit_code == 0, result.output
    rows = [r for r in json.loads(result.stdout) if r["shared_accelerators"] is not None]
    largest = max(
        rows,
        key=lambda r: abs(
            math.log(r["best_time_at_shared_before_min"] / r["best_time_at_shared_min"])
        ),
    )
    assert (largest["accelerator_family"], largest["round"]) == ("H100-SXM5-80GB", "v5.0")
    assert (largest["shared_with_round"], largest["shared_accelerators"]) == ("v3.0", 64)
    scores = load_round("v3.0", "v5.0").scores
    at = scores[
        (scores["workload"] == "bert")
        & (scores["accelerator_family"] == "H100-SXM5-80GB")
        & (scores["accelerators"] == 64)
        & (scores["division"] == "closed")
    ]
    best = at.groupby("round")["time_to_train_min"].min()
    assert largest["best_time_at_shared_before_min"] == pytest.approx(best["v3.0"], rel=1e-12)
    assert largest["best_time_at_shared_min"] == pytest.approx(best["v5.0"], rel=1e-12)
    before, after = (
        format_minutes(largest[f"best_time_at_shared{s}_min"]) for s in ("_before", "")
    )
    assert f"at 64 accelerators, best time {before} (v3.0) -> {after} (v5.0)" in _flat(
        result.stderr
    )


def test_an_empty_result_exits_2_with_nothing_on_stdout_in_every_format() -> None:
    """energy of a round without power logs (v3.1) or of a benchmark without them (v5.0
    R-GAT): exit 2, one ``error:`` line, and stdout empty in every format, as the table's
    (-f csv wrote a header and -f json ``[]`` before exiting 2); trends and scores
    --duplicates with no row alike."""
    for args in (("energy", "--round", "v3.1"), ("energy", "--round", "v5.0", "-b", "rgat")):
        for fmt in ("table", "csv", "json"):
            done = _invoke(*args, "-f", fmt)
            assert done.exit_code == 2, (args, fmt, done.output)
            assert done.stdout == "" and done.stderr.startswith("error: "), (args, fmt)
    trends = _invoke("trends", "--round", "v5.0", "-b", "rgat", "--family", "MI300X", "-f", "csv")
    assert trends.exit_code == 2 and trends.stdout == "" and "error: " in trends.stderr
    pairs = _invoke("scores", "--round", "v5.0", "--duplicates", "-f", "json")
    assert pairs.exit_code == 2 and pairs.stdout == "" and "error: " in pairs.stderr


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


def test_the_analysis_page_names_the_picks_interval_keys() -> None:
    analysis = (ROOT / "docs" / "analysis.md").read_text()
    assert [k for k in PICK_INTERVAL if f"`{k}`" not in analysis] == []
