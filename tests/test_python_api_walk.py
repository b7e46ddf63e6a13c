"""A user's walk of the Python API: the library reads names as the CLI does, checks the
tables it is given, refuses times that cannot be true, reads round names as typed, and
names its own parameters in its messages."""

from __future__ import annotations

import pytest

from gpuscale.analysis import AnalysisOptions, analyze, equilibrium, scaling_table
from gpuscale.analysis.metrics import ReferenceNotFoundError
from gpuscale.mlperf.bundled import load_round
from gpuscale.names import UnknownNameError


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


def test_dlrm_is_dlrm_dcnv2_and_mask_is_explained_not_empty(tables) -> None:
    assert set(scaling_table(tables.scores, "dlrm")["workload"]) == {"dlrm_dcnv2"}
    with pytest.raises(UnknownNameError, match=r"Mask R-CNN \('mask'\) is not in the rounds"):
        scaling_table(tables.scores, "mask")
    with pytest.raises(UnknownNameError, match=r"did you mean 'bert'"):
        scaling_table(tables.scores, "bret")


def test_analyze_reads_names_as_the_cli_does(tables) -> None:
    results = analyze(tables, ["BERT"], AnalysisOptions(n_boot=100))
    assert [r.workload for r in results] == ["bert"]
    with pytest.raises(UnknownNameError, match=r"did you mean 'bert'"):
        analyze(tables, ["bret"])


def test_a_missing_column_or_a_wrong_type_is_said_at_the_entry_point(tables) -> None:
    scores = tables.scores
    with pytest.raises(ValueError, match=r"^scores lacks the scores table's column time_to"):
        scaling_table(scores.drop(columns=["time_to_train_min"]), "bert")
    with pytest.raises(ValueError, match=r"column benchmark "):
        scaling_table(scores.drop(columns=["benchmark"]), "bert")
    with pytest.raises(TypeError, match=r"^scores must be a pandas DataFrame.*not NoneType$"):
        scaling_table(None, "bert")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"is a scores table.*pass scaling_table\(scores"):
        equilibrium(scores)
    with pytest.raises(TypeError, match=r"^options must be a gpuscale.analysis.AnalysisOptions"):
        analyze(tables, ["bert"], {"reference": "family"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^tables must be a gpuscale.tables.RoundTables"):
        analyze(scores, ["bert"])  # type: ignore[arg-type]


def test_a_time_to_train_that_cannot_be_true_is_refused(tables) -> None:
    scores = tables.scores.copy()
    bert = scores["workload"] == "bert"
    scores.loc[bert, "time_to_train_min"] = -scores.loc[bert, "time_to_train_min"]
    bad = int((bert & scores["time_to_train_min"].notna()).sum())
    rows = f"{bad:,} row{'' if bad == 1 else 's'}"
    said = rf"^scores has {rows} whose time_to_train_min is not a positive finite"
    with pytest.raises(ValueError, match=said):
        scaling_table(scores, "bert")
    table = scaling_table(tables.scores, "bert").assign(time_to_train_min=0.0)
    with pytest.raises(ValueError, match=r"time_to_train_min is not a positive"):
        equilibrium(table)


def test_round_names_in_capitals_and_an_unbundled_round_said_plainly() -> None:
    assert set(load_round("V4.1").scores["round"]) == {"v4.1"}
    with pytest.raises(KeyError) as raised:
        load_round("v4.2")
    assert str(raised.value).startswith("round v4.2 not bundled (did you mean 'v4.1'?); bundled: ")
    with pytest.raises(KeyError) as far:
        load_round("v9.9")  # nothing close: no guess
    assert str(far.value).startswith("round v9.9 not bundled; bundled: ")


def test_messages_from_python_name_the_parameter(tmp_path) -> None:
    from gpuscale.mlperf.ingest import read_round
    from gpuscale.sources import SourceError

    (tmp_path / "Org" / "results").mkdir(parents=True)
    with pytest.raises(SourceError, match=r"e\.g\. round_name='v4\.1'$"):  # the CLI's: --round
        read_round(tmp_path)


def test_advise_on_a_ruleset_without_rcps_names_the_parameter() -> None:
    pytest.importorskip("mlperf_logging")
    from gpuscale.advice.api import advise_by_keywords as advise

    with pytest.raises(ValueError, match=r"give --ruleset [\d.]+ \(ruleset='[\d.]+' from Python\)"):
        advise(params=25e6, step_ms=100, workload="resnet", ruleset="5.0.0")


def test_a_reference_is_matched_ignoring_case_and_a_wrong_one_named(tables) -> None:
    table = scaling_table(tables.scores, "bert", reference="krai/7920t_2xa5000_hdd")
    assert set(table["reference_system_id"]) == {"7920T_2xA5000_hdd"}
    with pytest.raises(ReferenceNotFoundError, match=r"'nosuch/sys' names no system.*closest"):
        scaling_table(tables.scores, "bert", reference="nosuch/sys")
