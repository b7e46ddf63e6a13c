"""A round whose results today's rules mostly reject is said with the rule most of them
broke, whole: a rule that holds parentheses (a quality target's expression) is not cut at
its first closing one."""

from __future__ import annotations

import pandas as pd

from gpuscale.tables.views import rejected_notes

TARGET = "quality target not reached (eval_accuracy: (v['value'] >= 0.720) and v['value'] < 1.0)"


def test_the_rule_most_results_broke_is_said_whole() -> None:
    reasons = [
        f"10 runs did not count: 10 not converged (e.g. {TARGET}); at most 1 may not",
        f"10 runs did not count: 9 not converged (e.g. {TARGET}); at most 1 may not",
        "10 runs did not count: 10 noncompliant (e.g. 0 opt_lamb_epsilon lines); at most 1",
        "no result files",
    ]
    scores = pd.DataFrame(
        {
            "round": "v1.1",
            "benchmark": "bert",
            "workload": "bert",
            "time_to_train_min": [None, None, None, None, 12.5],
            "score_reason": [*reasons, ""],
        }
    )
    (line,) = rejected_notes(scores)
    counted = line.split(
        "not scored by ruleset 1.1.0's checks as mlperf-logging applies them today, "
    )[1]
    assert counted.startswith(f"2 for {TARGET} (each result's own in its score_reason"), line
    assert line.startswith("v1.1 bert: 4 of 5 results")


def test_where_each_reason_is_names_the_column_not_the_command_just_run() -> None:
    """`gpuscale scores` of v1.1 said "(`gpuscale scores` of the round, -b bert, gives each
    reason)": the command just run. It names the column, and the columns that list the
    reasons one result a line (the table folds each over four lines)."""
    reason = "10 runs did not count: 10 noncompliant (e.g. 0 weights_initialization lines)"
    scores = pd.DataFrame(
        {
            "round": "v1.1",
            "benchmark": ["bert", "bert", "minigo"],
            "workload": ["bert", "bert", "minigo"],
            "time_to_train_min": [None, None, None],
            "score_reason": [reason] * 3,
        }
    )
    lines = rejected_notes(scores)
    assert [line.split(":")[0] for line in lines] == ["v1.1 bert", "v1.1 minigo"]
    for line, benchmark in zip(lines, ("bert", "minigo"), strict=True):
        hint = line[line.index("(each result's") :]
        assert f"-b {benchmark} --columns submitter,system_name,score_reason" in hint
        assert "gives each reason" not in hint


def test_the_round_s_own_ruleset_is_named_where_known() -> None:
    """v1.1's BERT results fail ruleset 1.1.0's own weights_initialization rule: the line
    read "not scored by today's rules", as if a later round's rules were applied. A round
    whose ruleset mlperf-logging lacks keeps the plain words."""
    reason = "10 runs did not count: 10 noncompliant (e.g. 0 weights_initialization lines)"
    for round_name, words in (
        ("v1.1", "ruleset 1.1.0's checks as mlperf-logging applies them today"),
        ("v9.9", "today's rules"),
    ):
        scores = pd.DataFrame(
            {
                "round": round_name,
                "benchmark": "bert",
                "workload": "bert",
                "time_to_train_min": [None],
                "score_reason": [reason],
            }
        )
        (line,) = rejected_notes(scores)
        assert f"1 of 1 result not scored by {words}, 1 for 0 weights_initialization" in line
