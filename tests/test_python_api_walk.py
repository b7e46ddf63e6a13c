"""A user's walk of the Python API: the library reads names as the CLI does, checks the
tables it is given, refuses times that cannot be true, reads round names as typed, and
names its own parameters in its messages."""

from __future__ import annotations

import pytest

from gpuscale.analysis import AnalysisOptions, analyze, equilibrium, scaling_table
from gpuscale.analysis.metrics import ReferenceNotFoundError
from gpuscale.mlperf.bundled import load_round
from gpuscale.names import UnknownNameError

from .golden import Golden

VIEW = "api/refusals"


@pytest.fixture(scope="module")
def tables():
    return load_round("v4.1")


@pytest.mark.parametrize(
    ("typed", "workload"),
    [("BERT", "bert"), ("Bert", "bert"), ("llama2-70b-lora", "llama2_70b_lora")],
)
def test_scaling_table_reads_names_as_the_cli_does(tables, typed, workload) -> None:
    table = scaling_table(tables.scores, typed)
    assert len(table) > 0 and set(table["workload"]) == {workload}


def test_dlrm_is_dlrm_dcnv2_and_mask_is_explained_not_empty(tables, golden: Golden) -> None:
    assert set(scaling_table(tables.scores, "dlrm")["workload"]) == {"dlrm_dcnv2"}
    with pytest.raises(UnknownNameError, match=r"\('mask'\)") as refused:  # the name typed
        scaling_table(tables.scores, "mask")
    assert str(refused.value).startswith("Mask R-CNN")
    golden.check(VIEW, "a workload the rounds lack", str(refused.value))
    with pytest.raises(UnknownNameError, match=r"did you mean 'bert'"):
        scaling_table(tables.scores, "bret")


def test_analyze_reads_names_as_the_cli_does(tables) -> None:
    results = analyze(tables, ["BERT"], AnalysisOptions(n_boot=100))
    assert [r.workload for r in results] == ["bert"]
    with pytest.raises(UnknownNameError, match=r"did you mean 'bert'"):
        analyze(tables, ["bret"])


def test_a_missing_column_or_a_wrong_type_is_said_at_the_entry_point(
    tables, golden: Golden
) -> None:
    """Each refusal names the parameter first, then what it lacks or what it should be."""
    scores = tables.scores
    said = []
    for error, call, parameter, named in (
        (
            ValueError,
            lambda: scaling_table(scores.drop(columns=["time_to_train_min"]), "bert"),
            "scores",
            "time_to_train_min",
        ),
        (
            ValueError,
            lambda: scaling_table(scores.drop(columns=["benchmark"]), "bert"),
            "scores",
            "benchmark",
        ),
        (TypeError, lambda: scaling_table(None, "bert"), "scores", "NoneType"),
        (ValueError, lambda: equilibrium(scores), "", "scaling_table(scores"),
        (
            TypeError,
            lambda: analyze(tables, ["bert"], {"reference": "family"}),
            "options",
            "AnalysisOptions",
        ),
        (TypeError, lambda: analyze(scores, ["bert"]), "tables", "RoundTables"),
    ):
        with pytest.raises(error) as refused:
            call()
        assert str(refused.value).startswith(parameter) and named in str(refused.value)
        said.append(str(refused.value))
    golden.check(VIEW, "a missing column or a wrong type", "\n".join(said))


def test_a_time_to_train_that_cannot_be_true_is_refused(tables, golden: Golden) -> None:
    scores = tables.scores.copy()
    bert = scores["workload"] == "bert"
    scores.loc[bert, "time_to_train_min"] = -scores.loc[bert, "time_to_train_min"]
    bad = int((bert & scores["time_to_train_min"].notna()).sum())
    rows = f"{bad:,} row{'' if bad == 1 else 's'}"
    with pytest.raises(ValueError, match=rf"^scores has {rows} ") as refused:  # how many
        scaling_table(scores, "bert")
    golden.check(VIEW, "negative times to train", str(refused.value))
    table = scaling_table(tables.scores, "bert").assign(time_to_train_min=0.0)
    with pytest.raises(ValueError, match="time_to_train_min") as refused:
        equilibrium(table)
    golden.check(VIEW, "times to train of zero", str(refused.value))


def test_an_accelerator_count_that_cannot_be_true_is_refused(tables) -> None:
    scores = tables.scores.copy()
    bert = scores.index[scores["workload"] == "bert"]
    # a negative count was dropped unsaid (the system left out as one with no count)
    negative = scores.assign(accelerators=scores["accelerators"].astype(object))
    negative.loc[bert[:2], "accelerators"] = [-8, 2.5]
    with pytest.raises(ValueError, match=r"^scores has 2 rows whose accelerators ") as refused:
        scaling_table(negative, "bert")
    assert "(-8, 2.5)" in str(refused.value)
    # a count as text failed inside pandas ('>' not supported between str and int)
    text = scores.assign(accelerators=scores["accelerators"].astype(str))
    with pytest.raises(ValueError, match=r"^scores has \d+ rows whose accelerators is text"):
        scaling_table(text, "bert")
    # a bool was read as 1 accelerator (pandas takes True for 1): the column or a row
    flags = scores.assign(accelerators=True)
    with pytest.raises(ValueError, match=r"^scores has \d+ rows whose accelerators is a bool"):
        scaling_table(flags, "bert")
    one = scores.assign(accelerators=scores["accelerators"].astype(object))
    one.loc[bert[:1], "accelerators"] = [True]
    with pytest.raises(
        ValueError, match=r"^scores has 1 row whose accelerators is a bool \(True\)"
    ):
        scaling_table(one, "bert")
    # missing and 0 stay allowed: the system is left out as one without a count
    unknown = scores.assign(accelerators=scores["accelerators"].astype(object))
    unknown.loc[bert[:2], "accelerators"] = [None, 0]
    assert len(scaling_table(unknown, "bert")) == len(scaling_table(tables.scores, "bert")) - 2


def test_equilibrium_refuses_measures_as_text_and_several_workloads(tables) -> None:
    """A speedup as text failed inside pandas ('Can only string multiply by an integer');
    a table of BERT and GPT-3 concatenated was picked across, labelled BERT."""
    import pandas as pd

    table = scaling_table(tables.scores, "bert")
    text = table.assign(speedup=table["speedup"].astype(str))
    with pytest.raises(ValueError, match=rf"^table has {len(table)} rows whose speedup is text"):
        equilibrium(text)
    negative = table.assign(normalized_efficiency=-table["normalized_efficiency"])
    with pytest.raises(ValueError, match=r"whose normalized_efficiency is not a positive"):
        equilibrium(negative)
    both = pd.concat([table, scaling_table(tables.scores, "gpt3")], ignore_index=True)
    with pytest.raises(ValueError, match=r"^table holds 2 workloads \(bert and gpt3\)"):
        equilibrium(both)
    assert equilibrium(both[both["workload"] == "bert"]) == equilibrium(table)
    # several rounds' scores on one table: picked across rules and software, unlabelled
    two_rounds = load_round("v3.0", "v4.1").scores
    across = scaling_table(two_rounds, "bert")
    with pytest.raises(ValueError, match=r"^table holds 2 rounds \(v3.0 and v4.1\)"):
        equilibrium(across)


def test_a_pick_without_an_e_prime_says_none(tables) -> None:
    """The knee reads times alone, so it may pick a system whose E' is missing: its line
    said 'E' nan'."""
    table = scaling_table(tables.scores, "bert")
    knee = equilibrium(table.assign(normalized_efficiency=float("nan"))).knee
    assert knee is not None and "nan" not in knee.line
    assert "(4 x H100-SXM5-80GB, 10.2 min)" in knee.line and "E'" not in knee.line
    # nor is the E' threshold's floor, a share of no E', said as "E' >= nan"
    unpicked = equilibrium(table.assign(normalized_efficiency=float("nan"))).unpicked
    assert unpicked["efficiency_threshold"] == (
        "no system has an E' (normalized_efficiency is missing in every row)"
    )


def test_round_names_in_capitals_and_an_unbundled_round_said_plainly(golden: Golden) -> None:
    assert set(load_round("V4.1").scores["round"]) == {"v4.1"}
    with pytest.raises(KeyError) as raised:
        load_round("v4.2")
    assert "'v4.1'" in str(raised.value)  # the closest
    golden.check(VIEW, "round v4.2", str(raised.value))
    with pytest.raises(KeyError) as far:
        load_round("v9.9")  # nothing close: no guess
    assert "did you mean" not in str(far.value) and "v4.1" in str(far.value)  # listed only
    golden.check(VIEW, "round v9.9", str(far.value))


def test_messages_from_python_name_the_parameter(tmp_path) -> None:
    import re

    from gpuscale.mlperf.ingest import read_round
    from gpuscale.mlperf.shipped import bundled_rounds
    from gpuscale.sources import SourceError

    (tmp_path / "Org" / "results").mkdir(parents=True)
    newest = re.escape(bundled_rounds()[-1])  # the example: the newest round shipped
    with pytest.raises(SourceError, match=rf"round_name='{newest}'$"):  # the CLI's: --round
        read_round(tmp_path)


def test_advise_on_a_ruleset_without_rcps_names_the_parameter(golden: Golden) -> None:
    pytest.importorskip("mlperf_logging")
    from gpuscale.advice.api import advise_by_keywords as advise

    as_python = r"give ruleset='[\d.]+'$"  # the keyword, as Python names it
    with pytest.raises(ValueError, match=as_python) as refused:
        advise(params=25e6, step_ms=100, workload="resnet", ruleset="5.0.0")
    golden.check(VIEW, "a ruleset without RCPs", str(refused.value))


def test_a_reference_is_matched_ignoring_case_and_a_wrong_one_named(tables, golden: Golden) -> None:
    table = scaling_table(tables.scores, "bert", reference="krai/7920t_2xa5000_hdd")
    assert set(table["reference_system_id"]) == {"7920T_2xA5000_hdd"}
    with pytest.raises(ReferenceNotFoundError, match="'nosuch/sys'") as refused:
        scaling_table(tables.scores, "bert", reference="nosuch/sys")
    golden.check(VIEW, "a reference that names no system", str(refused.value))
