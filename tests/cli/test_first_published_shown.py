"""Every command that shows where a result was first published says what the report says
(``mlperf.earlier.first_published``: the loaded rounds and the bundled ones before the
newest loaded): ``scores --round v4.1`` gave ``first_round`` v4.1 to all 29 BERT results
while the report said 10 of them were first published earlier. The numbers stay those
of the tables the analyses read."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.tables.republished import KEY
from gpuscale.tables.views import significant

V41_BERT = ["--round", "v4.1", "-b", "bert"]
# the report's "First published" of v4.1 BERT (tests/report/test_republished_words.py)
EARLIER = {
    ("NVIDIA", "eos_n434_ngc23.09_pytorch"): ("v3.1", "v4.0, v4.1"),
    ("Krai", "7920T_2xA5000_hdd"): ("v3.1", "v4.1"),
    ("NVIDIA", "eos_n8_ngc23.04_pytorch"): ("v3.0", "v3.1, v4.0, v4.1"),
}


def _cell(value: object) -> str:
    """A cell as the CSV writes it (floats to 15 significant digits, NaN empty)."""
    if value is None:
        return ""
    try:
        number = float(str(value))
    except ValueError:
        return str(value)
    return "" if number != number else repr(significant(number))


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def _csv(*args: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(_run(*args)), keep_default_na=False, dtype=str)


def _report_firsts() -> dict[tuple[str, str], str]:
    """{(org, system_id): first round} of the v4.1 BERT results the report says were
    first published earlier (``report.republished_words.earlier_firsts``)."""
    from gpuscale.analysis import AnalysisOptions, analyze
    from gpuscale.mlperf.bundled import load_round
    from gpuscale.mlperf.earlier import first_published
    from gpuscale.report.republished_words import earlier_firsts

    tables = load_round("v4.1")
    [result] = analyze(tables, ["bert"], AnalysisOptions())
    return earlier_firsts(result.table, first_published(tables))


@pytest.fixture(scope="module")
def report_firsts() -> dict[tuple[str, str], str]:
    return _report_firsts()


def _firsts(frame: pd.DataFrame) -> dict[tuple[str, str], str]:
    earlier = frame[frame["first_round"] != frame["round"]]
    keys = zip(earlier["org"], earlier["system_id"], earlier["first_round"], strict=True)
    return {(str(o), str(s)): str(f) for o, s, f in keys}


def test_scores_says_the_first_round_the_report_says(report_firsts) -> None:
    from gpuscale.mlperf.bundled import load_round

    shown = _csv("scores", *V41_BERT, "-f", "csv")
    assert len(shown) == 29
    assert len(report_firsts) == 10
    assert _firsts(shown) == report_firsts
    rows = shown.set_index(["org", "system_id"])
    for key, (first, again) in EARLIER.items():
        assert (rows.loc[key, "first_round"], rows.loc[key, "republished_in"]) == (first, again)
    # the official scores are the table's, unchanged
    tables = load_round("v4.1")
    bert = tables.scores[tables.scores["benchmark"] == "bert"]
    official = bert.set_index(["org", "system_id"])["time_to_train_min"].map(_cell)
    assert rows["time_to_train_min"].map(_cell).sort_index().equals(official.sort_index())
    # the table the analyses read keeps its own marking (over the loaded round only)
    assert (tables.scores["first_round"] == tables.scores["round"]).all()


def test_analyze_csv_and_json_carry_the_first_round_without_moving_a_number(
    report_firsts,
) -> None:
    from gpuscale.analysis import AnalysisOptions, analyze
    from gpuscale.analysis.terminal import every_result_view
    from gpuscale.mlperf.bundled import load_round

    shown = _csv("analyze", *V41_BERT, "-f", "csv")
    assert _firsts(shown) == report_firsts
    assert list(shown.columns[8:11]) == ["availability", "first_round", "republished_in"]
    # every other column is the analysis' own, value for value
    [result] = analyze(load_round("v4.1"), ["bert"], AnalysisOptions())
    plain = every_result_view([result]).frame.reset_index(drop=True).map(_cell)
    assert shown.drop(columns=["first_round", "republished_in"]).map(_cell).equals(plain)
    [document] = json.loads(_run("analyze", *V41_BERT, "-f", "json"))["rounds"]
    systems = pd.DataFrame(document["systems"]).assign(round="v4.1")
    assert _firsts(systems) == report_firsts
    assert list(systems.columns[: len(shown.columns)]) == list(shown.columns)


def test_dataset_says_the_first_round_and_each_runs_result_flag(tmp_path: Path) -> None:
    _run("dataset", "--round", "v4.1", "--out", str(tmp_path / "out"))
    results = pd.read_csv(tmp_path / "out" / "results.csv", keep_default_na=False, dtype=str)
    bert = results[results["benchmark"] == "bert"]
    assert _firsts(bert) == _firsts(_csv("scores", *V41_BERT, "-f", "csv"))
    assert len(_firsts(bert)) == 10
    runs = pd.read_csv(tmp_path / "out" / "runs.csv", keep_default_na=False, dtype=str)
    flags = results.set_index(KEY)["samples_to_converge_flag"]
    each = runs.set_index(KEY).index.map(flags.to_dict())
    assert list(runs["samples_to_converge_flag"]) == list(each)


def test_a_flagged_count_is_flagged_on_each_of_its_runs() -> None:
    """v3.1 3D U-Net: results whose count is in epochs where the RCPs count samples; the
    dataset's runs said the counts with no flag beside them."""
    from gpuscale.analysis.dataset import dataset
    from gpuscale.mlperf.bundled import load_round

    results, runs = dataset(load_round("v3.1"))
    flagged = results[results["samples_to_converge_flag"] != ""]
    assert len(flagged) > 0
    mine = runs.merge(flagged[KEY], on=KEY)
    assert len(mine) > 0
    assert (mine["samples_to_converge_flag"] != "").all()
    plain = runs.merge(results[results["samples_to_converge_flag"] == ""][KEY], on=KEY)
    assert (plain["samples_to_converge_flag"] == "").all()
