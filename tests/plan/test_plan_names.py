"""What a plan says about the workloads of the data it was given and the systems it rests
on: names as the round's scores give them, why a loaded workload has no plan, and the
support of the shape beyond a family's counts agreeing with the systems a count leans on."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from gpuscale.mlperf.benchmarks import workload_in_round
from gpuscale.names import UnknownNameError
from gpuscale.planning import PlanRequest, plan_for

from .test_plan_model import _scores, two_families


def v11_like() -> pd.DataFrame:
    """A v1.1-like scores table: resnet and the ``ssd`` folder in the closed division with
    times (the folder's workload as the round's ruleset names it), and BERT's results
    open with times or closed without a score (as v1.1's are)."""
    ssd = workload_in_round("ssd", "v1.1")
    rows = [("v1.1", w, "X1", n, 100.0 * 8 / n, 32 * n) for w in ("resnet", ssd) for n in (8, 16)]
    frame = _scores(rows)
    frame.loc[frame["workload"] == ssd, "benchmark"] = "ssd"
    bert = _scores([("v1.1", "bert", "X1", n, 10.0 * 8 / n, 32 * n) for n in (8, 16, 64)])
    unscored = _scores([("v1.1", "bert", "X1", n, math.nan, 32 * n) for n in (8, 32)])
    return pd.concat([frame, bert.assign(division="open"), unscored], ignore_index=True)


def refusal(scores: pd.DataFrame, workload: str) -> str:
    with pytest.raises(UnknownNameError) as caught:
        plan_for(PlanRequest(workload=workload, accelerator="X1", devices=[8]), scores)
    return str(caught.value)


def test_the_workloads_valid_here_are_named_as_the_rounds_scores_name_them() -> None:
    """v1.1's plans listed "retinanet" (the cross-round name of the ``ssd`` folder) where
    v1.1's ``ssd`` is SSD-ResNet34 and its scores say so."""
    scores = v11_like()
    said = refusal(scores, "bert")
    planned = scores[(scores["division"] == "closed") & scores["time_to_train_min"].notna()]
    valid = said.split("valid here: ")[1].split(", ")
    assert valid == sorted(set(planned["workload"]))
    assert "retinanet" not in valid
    # the folder's name still reads as that round's workload
    table = plan_for(PlanRequest(workload="ssd", accelerator="X1", devices=[8]), scores)
    assert table.model["workload"] == workload_in_round("ssd", "v1.1")


def test_a_loaded_workload_of_another_division_is_said_so_not_absent() -> None:
    """v1.1's BERT was "not in the rounds loaded": its scored results are open division
    (the plan keeps the closed one) and its closed ones have no score."""
    scores = v11_like()
    said = refusal(scores, "bert")
    assert "not in the rounds loaded" not in said
    bert = scores[scores["workload"] == "bert"]
    opened = int((bert["division"] == "open").sum())
    unscored = int(((bert["division"] == "closed") & bert["time_to_train_min"].isna()).sum())
    assert f"its {len(bert)} results here are {opened} open division and {unscored} closed " in said
    assert "--division open" in said
    only_open = scores[~((scores["workload"] == "bert") & (scores["division"] == "closed"))]
    assert f"its {opened} results here are open division;" in refusal(only_open, "bert")


def test_beyond_the_family_the_shape_support_agrees_with_the_systems_leaned_on() -> None:
    """A plan said "4,096 accelerators lean on ... Eos_n434 (3,472 devices)", then "no
    family of the workload ran counts near these": the family's own results were not
    counted as near."""
    scores = two_families()
    largest = int(scores["accelerators"].max())
    for n in (largest + largest // 4, 4 * largest):
        result = plan_for(PlanRequest(workload="bert", accelerator="X1", devices=[n]), scores)
        [row] = result.rows
        assert row["count_class"] == "ii_out"
        [said] = [s for s in result.notes if "beyond the family's counts (class ii)" in s]
        leaned = {int(s["accelerators"]) for s in row["nearest"]}
        within = {c for c in leaned if n / 2 <= c <= 2 * n}
        if within:  # its own family's results near it: named as the shape's support
            families = {s["family"] for s in row["nearest"]}
            assert "within an octave of" in said and "no family" not in said
            assert all(f in said for f in families)
        else:  # none near: said, with the counts it leans on
            assert "no family of the workload ran counts within an octave" in said
            assert all(f"{c:,}" in said.split("leaned on ran")[1] for c in leaned)


def test_closed_results_without_a_score_say_why() -> None:
    """v1.1's closed BERT results have no score because every run fails a check of the
    round's rules (as MLCommons' summarizer scores them: its official v1.1 table has only
    the open ones); the refusal said "without a score" and not why."""
    scores = v11_like()
    unscored = (scores["workload"] == "bert") & scores["time_to_train_min"].isna()
    reasons = ["10 runs did not count: 10 noncompliant (e.g. 0 weight lines)", "1 run aborted"]
    scores.loc[unscored, "score_reason"] = [reasons[0]] * (int(unscored.sum()) - 1) + reasons[1:]
    said = refusal(scores, "bert")
    assert f"without a score (the most common reason: {reasons[0]})" in said


@pytest.mark.parametrize(
    ("emptied", "said"),
    [
        (["global_batch_size"], "a global batch size"),
        (["global_batch_size", "accelerators"], "a global batch size or accelerator count"),
    ],
)
def test_timed_closed_results_the_model_cannot_read_say_what_they_lack(
    emptied: list[str], said: str, golden
) -> None:
    """A workload whose closed-division results have a time but no global batch (v0.7's
    MiniGo) is loaded, not absent: the refusal counts them and names what they lack."""
    scores = v11_like()
    resnet = scores["workload"] == "resnet"
    for column in emptied:
        scores[column] = scores[column].astype(object)
        scores.loc[resnet, column] = None
    refused = refusal(scores, "resnet")
    assert "not in the rounds loaded" not in refused
    n = int(resnet.sum())
    assert f"its {n} closed-division results with a time here each lack {said}," in refused
    golden.check("plan/refusals", f"timed results lacking {' and '.join(emptied)}", refused)
