"""One vocabulary for what went wrong with a run: the logged ``run_stop`` statuses
(``abort``, ``fail``...) read as the documented ``aborted``, and every status and problem
kind gpuscale writes is named in docs/schemas.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuscale.mlperf.duplicates import DUPLICATE_INPUT
from gpuscale.mlperf.ingest import read_round
from gpuscale.mlperf.rules import known_rulesets
from gpuscale.sources import SourceError
from gpuscale.tables import ProblemKind, RunStatus

from .logbuilder import RoundBuilder, result_log

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas.md"


@pytest.mark.parametrize("logged", ["abort", "fail", "aborted"])
def test_a_logged_stop_status_is_read_as_aborted_with_the_word_kept(
    tmp_path: Path, logged: str
) -> None:
    rb = RoundBuilder().system("Acme", "box", per_node="8")
    rb.runs("Acme", "box", "bert", [10, 11, 12, 13, 14, 15, 16, 17, 18])
    rb.raw(
        "Acme/results/box/bert/result_9.txt", result_log(minutes=1, status=logged, converged=False)
    )
    tables = read_round(rb.write_dir(tmp_path))
    run = tables.runs[tables.runs.run_file == "result_9.txt"].iloc[0]
    assert run["status"] == "aborted" and not run["counted"]
    problem = tables.problems[tables.problems["path"].str.endswith("result_9.txt")].iloc[0]
    assert problem["kind"] == "aborted"
    if logged != "aborted":
        assert f"run_stop status {logged!r}" in problem["message"]
    assert set(tables.problems["kind"]) <= documented_kinds()


def documented_kinds() -> set[str]:
    """The words in backticks of the runs' status and the problems' kinds in the docs."""
    text = SCHEMAS.read_text()
    runs = text[text.index("**runs**") : text.index("**scores**")]
    problems = text[text.index("**problems**") :].split("\n\n")[0]
    return set(re.findall(r"`([^`]+)`", runs + problems))


def test_every_status_and_problem_kind_written_is_documented() -> None:
    written = {str(k) for k in (*RunStatus, *ProblemKind)} | {DUPLICATE_INPUT}
    assert written - documented_kinds() == set()


def test_a_round_without_rules_of_its_own_says_whose_it_was_checked_against(
    tmp_path: Path, golden
) -> None:
    """A round past the newest rules (v7.0, read with the newest ruleset) says so wherever
    its problems are told; one no round can be (``v41.0``, a typo of v4.1, which would be
    checked against the newest rules and score nothing) is refused, the round meant named."""
    from gpuscale.tables.views import ingest_summary, reading_notes

    rb = RoundBuilder().system("Acme", "box", per_node="8")
    rb.runs("Acme", "box", "bert", [10, 11, 12, 13, 14, 15, 16, 17, 18, 19])
    folder = rb.write_dir(tmp_path)
    with pytest.raises(SourceError) as caught:
        read_round(folder, round_name="v41.0")
    refused = str(caught.value)
    assert refused.index("v41.0") < refused.index("v4.1?")  # the round meant, asked
    newest = known_rulesets()[-1]
    tables = read_round(folder, round_name="v7.0")
    said = tables.problems[tables.problems["kind"] == "other ruleset"]["message"].tolist()
    assert len(said) == 1 and "v7.0" in said[0] and newest in said[0], said
    # the newest rules are those of the mlperf-logging installed, not gpuscale's words
    latest = {newest: "<newest>", "v" + newest.rsplit(".", 1)[0]: "<newest round>"}
    golden.check("mlperf/rulesets", "a round past the newest rules", said[0], paths=latest)
    golden.check("mlperf/rulesets", "no round", refused, paths=latest)
    assert any(said[0] in line for line in reading_notes(tables.problems))
    assert any(said[0] in line for line in ingest_summary(tables)[0])
    own = read_round(folder, round_name="v4.1").problems
    assert "other ruleset" not in set(own["kind"])  # a round with rules of its own: none
