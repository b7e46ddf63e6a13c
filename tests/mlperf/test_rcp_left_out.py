"""A reference run that cannot be true is left out where the RCP files are read, and said:
ruleset 4.1.0 lists GPT-3 at a global batch of 3,072 converging in 13,790,871,552 tokens
(2,192 steps) beside six runs of 192-200 steps (1.21e9-1.26e9 tokens), the same six as
rulesets 3.0.0-4.0.0. Kept, it put the point's mean at 3.0e9 tokens: v4.1's GPT-3 results
read 0.79-0.93 of the samples their references expect, and the plan split GPT-3 into two
definitions (v3.0-v4.0 and v4.1) whose rules are the same."""

from __future__ import annotations

from gpuscale.analysis.analyze import AnalysisOptions, analyze
from gpuscale.analysis.critical_batch import round_rcp_model
from gpuscale.mlperf import load_round
from gpuscale.mlperf.rcp import rcp_left_out, rcp_points, rcp_runs
from gpuscale.planning import PlanRequest, plan_for
from gpuscale.report.page import problems_shown

WHERE = "rcp_checker/training_4.1.0/rcps_gpt3.json"


def test_the_reader_leaves_the_run_out_and_keeps_every_other() -> None:
    runs = dict(rcp_runs("4.1.0", "gpt3"))
    assert sorted(runs[3072.0]) == [1_207_959_552.0] * 5 + [1_258_291_200.0]
    assert len(runs[2048.0]) == 7 and len(runs[6144.0]) == 6  # no such run: all kept
    (left,) = rcp_left_out("4.1.0", "gpt3")
    assert (left.batch, left.value, left.median, left.runs) == (
        3072.0,
        13_790_871_552.0,
        1_207_959_552.0,
        7,
    )
    assert rcp_left_out("4.0.0", "gpt3") == () and rcp_left_out("4.1.0", "bert") == ()


def test_the_3072_point_and_the_model_read_as_in_the_rulesets_before() -> None:
    """The point is the six runs' as in 4.0.0 (1.216e9 tokens, not 3.0e9), and E(B) of
    4.1.0, which adds a point at 6,144, stays within 2% of 4.0.0's over their batches."""
    assert dict(rcp_points("4.1.0", "gpt3"))[3072.0] == dict(rcp_points("4.0.0", "gpt3"))[3072.0]
    new, old = round_rcp_model("v4.1", "gpt3"), round_rcp_model("v4.0", "gpt3")
    assert new is not None and old is not None
    for batch in (1536, 2048, 3072, 4096, 8192):
        assert abs(new.samples(batch) / old.samples(batch) - 1) < 0.02


def test_v41_gpt3_results_converge_as_their_references_expect() -> None:
    """Each of v4.1's 13 GPT-3 results needed 0.96-1.05 of the tokens E(B) expects at its
    batch (it read 0.79-0.93 against the typo's model)."""
    table = analyze(load_round("v4.1"), ["gpt3"], AnalysisOptions(n_boot=100))[0].table
    ratios = table["samples_vs_expected"].to_numpy(float)
    assert len(ratios) == 13 and ((ratios > 0.95) & (ratios < 1.06)).all(), ratios


def test_the_round_says_what_was_left_out_in_its_workload_s_report() -> None:
    tables = load_round("v4.1")
    said = tables.problems[tables.problems["path"] == WHERE]
    (message,) = said["message"]
    assert said["kind"].tolist() == ["impossible value"]
    assert "13,790,871,552 tokens" in message and "batch 3,072" in message
    assert WHERE in set(problems_shown(tables, ["gpt3"])["path"])
    assert WHERE not in set(problems_shown(tables, ["bert"])["path"])
    assert not load_round("v4.0").problems["path"].str.startswith("rcp_checker").any()


def test_the_plan_pools_one_definition_of_gpt3() -> None:
    found = plan_for(PlanRequest(workload="gpt3", accelerator="H100", devices=[1024, 3072]))
    assert not any("definitions of gpt3" in note for note in found.notes), found.notes
