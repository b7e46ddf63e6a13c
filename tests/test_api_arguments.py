"""Issue 25: the public functions check their arguments; an unknown name is an error
naming the valid choices, never an empty result."""

from __future__ import annotations

import pytest

import gpuscale
from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import analyze
from gpuscale.analysis.equilibrium import equilibrium
from gpuscale.analysis.metrics import scaling_table
from gpuscale.mlperf.bundled import load_round
from gpuscale.names import UnknownNameError


@pytest.fixture(scope="module")
def tables():
    return load_round("v4.1")


def test_load_round_names_its_parameter() -> None:
    with pytest.raises(TypeError, match="rounds"):
        load_round(None)  # type: ignore[arg-type]


def test_scaling_table_refuses_an_unknown_benchmark(tables) -> None:
    with pytest.raises(ValueError, match=r"nosuch.*bert"):
        scaling_table(tables.scores, "nosuch")
    assert len(scaling_table(tables.scores, "bert")) > 0


def test_analyze_refuses_a_string_for_a_list_and_unknown_names(tables) -> None:
    with pytest.raises(TypeError, match="workloads"):
        analyze(tables, "bert")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="nosuch"):
        analyze(tables, ["nosuch"])


@pytest.mark.parametrize("name", ["batch", "nodes", "gpus_per_node"])
def test_advise_refuses_a_zero_count(name) -> None:
    # the one-line wording of every refused value (adc237a): the field, its value, the rule
    with pytest.raises(ValueError, match=f"invalid {name} 0: must be a positive"):
        gpuscale.advise(params=7e6, step_ms=20, link="pcie-phb", **{name: 0})


@pytest.mark.parametrize(
    ("call", "typed", "meant"),
    [
        (
            lambda: gpuscale.advise(parms=7e6, step_ms=2, batch=64, link="pcie-phb"),
            "parms",
            "params",
        ),
        (lambda: gpuscale.advise(params=7e6, step_ms=2, batch=64, lnk="pcie-phb"), "lnk", "link"),
        (
            lambda: gpuscale.plan(workload="bert", accelerator="H100", device=[8]),
            "device",
            "devices",
        ),
        # a user's word for a count of devices: gpuscale's own word
        (lambda: gpuscale.plan(workload="bert", accelerator="H100", gpus=[8]), "gpus", "devices"),
        (lambda: gpuscale.advise(params=7e6, step_ms=2, num_gpus=8), "num_gpus", "max_devices"),
        # the command line's option as a keyword: plan's --price is price_per_device_hour
        (
            lambda: gpuscale.plan(workload="bert", accelerator="H100", devices=[8], price=3),
            "price",
            "price_per_device_hour",
        ),
        (
            lambda: gpuscale.advise(params=7e6, step_ms=2, batch=64, price=2.5),
            "price",
            "price_per_device_hour",
        ),
        (
            lambda: gpuscale.plan(workload="bert", accelerator="H100", devices=[8], power=700),
            "power",
            "power_w",
        ),
        # analyze's --bootstrap is the options' n_boot
        (
            lambda: gpuscale.analyze(load_round("v4.1"), ["bert"], bootstrap=100),
            "bootstrap",
            "n_boot",
        ),
        (
            lambda: gpuscale.analyze(load_round("v4.1"), ["bert"], famlies=["H100"]),
            "famlies",
            "families",
        ),
    ],
)
def test_a_misspelt_keyword_is_named_with_the_closest(call, typed: str, meant: str) -> None:
    """``gpuscale.advise(parms=7e6)`` said "AdviceRequest.__init__() got an unexpected
    keyword argument 'parms'": a class the user never named, and no suggestion."""
    with pytest.raises(TypeError) as caught:
        call()
    said = str(caught.value)
    assert repr(typed) in said and f"did you mean {meant!r}" in said
    assert "__init__" not in said


@pytest.mark.parametrize(
    "call, typed, example",
    [
        (gpuscale.advise, "results.jsonl", "advise(bench='results.jsonl')"),
        (gpuscale.plan, "bert", "plan(workload='bert'"),
    ],
)
def test_a_positional_name_is_refused_with_the_keywords_to_give(call, typed, example) -> None:
    """A name given by position, a user's first guess, is answered with the keywords to
    give, never an attribute error from inside the request."""
    with pytest.raises(TypeError, match="its fields as keywords") as refused:
        call(typed)
    assert repr(typed) in str(refused.value) and example in str(refused.value)


@pytest.mark.parametrize(
    ("text", "fields", "golden_case"),
    [
        ('{"workload": "bert"}', ["accelerator"], "a field missing"),
        ("{}", ["workload", "accelerator"], "every required field missing"),
        ('{"workload": "bert", "accelerator": "H100", "devicez": [8]}', [], "a field misspelt"),
    ],
)
def test_a_request_read_from_json_names_its_missing_and_misspelt_fields(
    text: str, fields: list[str], golden_case: str, golden
) -> None:
    """``PlanRequest.from_json`` of an object lacking a required field names the field as
    the JSON's (a ValueError), not as ``__init__``'s keyword argument (a TypeError); a
    misspelt field gets the closest; what ``to_json`` wrote reads back equal."""
    with pytest.raises(ValueError) as refused:
        gpuscale.PlanRequest.from_json(text)
    said = str(refused.value)
    assert all(f in said for f in fields) and "__init__" not in said
    if not fields:
        assert "(did you mean 'devices'?)" in said
    golden.check("api/request_json", golden_case, said)
    request = gpuscale.PlanRequest(workload="bert", accelerator="H100", devices=[8, 64])
    assert gpuscale.PlanRequest.from_json(request.to_json()) == request


@pytest.mark.parametrize(
    ("kind", "text", "line", "column"),
    [
        ("AdviceRequest", "{", 1, 2),
        ("PlanRequest", '{"workload": "bert",\n "devices": [8,]}', 2, 16),
        ("BenchConfig", "", 1, 1),
    ],
)
def test_a_request_read_from_text_that_is_no_json_says_where_it_broke(
    kind: str, text: str, line: int, column: int, golden
) -> None:
    """``AdviceRequest.from_json("{")`` raised json's own JSONDecodeError; it is the
    package's one line naming the request read and the line and column it broke at."""
    from gpuscale.advice.request import AdviceRequest
    from gpuscale.bench.config import BenchConfig
    from gpuscale.tables.json_depth import NotJson

    request = {"AdviceRequest": AdviceRequest, "BenchConfig": BenchConfig}.get(kind)
    request = request or gpuscale.PlanRequest
    with pytest.raises(NotJson) as refused:
        request.from_json(text)
    said = str(refused.value)
    assert (refused.value.line, refused.value.column) == (line, column)
    assert isinstance(refused.value, ValueError) and len(said.splitlines()) == 1
    assert said.startswith(f"the {request.json_name} {text!r} is not JSON: ")
    assert said.endswith(f" at line {line}, column {column}")
    golden.check("api/request_json", f"not JSON: {kind}", said)


@pytest.mark.parametrize("devices", [[8, 8], (8, 16, 16), [16, 8.0, 16]])
def test_plan_refuses_a_device_count_given_twice_as_the_command_line_does(devices) -> None:
    """``--devices 8,16,16`` is refused; ``plan(devices=[8, 16, 16])`` planned 8 and 16
    without a word."""
    with pytest.raises(ValueError, match=r"(8|16) given twice; give each count once"):
        gpuscale.plan(workload="bert", accelerator="H100", devices=devices)


@pytest.mark.parametrize(
    ("keywords", "field"),
    [
        ({"n_boot": "100"}, "n_boot"),
        ({"threshold": None}, "threshold"),
        ({"threshold": "0.8"}, "threshold"),
        ({"k": 2.5}, "k"),
        ({"seed": 1.5}, "seed"),
    ],
)
def test_analysis_options_of_another_type_name_the_field(keywords, field) -> None:
    # a TypeError naming the field, not Python's own from a comparison inside
    with pytest.raises(TypeError, match=rf"^{field} must be"):
        AnalysisOptions(**keywords)


def test_analysis_options_keep_their_ranges() -> None:
    for value in (0, float("nan"), 1.5):
        with pytest.raises(ValueError, match="invalid threshold"):
            AnalysisOptions(threshold=value)
    with pytest.raises(ValueError, match="invalid n_boot 99"):
        AnalysisOptions(n_boot=99)
    with pytest.raises(ValueError, match="invalid seed"):
        AnalysisOptions(seed=2**63)
    options = AnalysisOptions(seed=2**63 - 1, n_boot=100, k=None, threshold=1)
    assert (options.seed, options.n_boot, options.threshold) == (2**63 - 1, 100, 1)


def test_scaling_table_and_equilibrium_name_a_wrong_type(tables) -> None:
    with pytest.raises(TypeError, match=r"^reference must be a str"):
        scaling_table(tables.scores, "bert", reference=3)  # type: ignore[arg-type]
    table = scaling_table(tables.scores, "bert")
    with pytest.raises(TypeError, match=r"^threshold must be a number"):
        equilibrium(table, threshold="0.8")  # type: ignore[arg-type]
    text = tables.scores.assign(time_to_train_min=tables.scores["time_to_train_min"].astype(str))
    with pytest.raises(ValueError, match=r"^scores has \d+ rows whose time_to_train_min is text"):
        scaling_table(text, "bert")


def test_text_arguments_name_themselves_and_what_they_take(tables, tmp_path) -> None:
    from gpuscale.mlperf.ingest import read_round

    with pytest.raises(TypeError, match=r"^round_name must be a str like 'v4.1' or None, not int"):
        read_round(tmp_path, round_name=5)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^division must be a str or None, not int"):
        scaling_table(tables.scores, "bert", division=1)  # type: ignore[arg-type]
    table = scaling_table(tables.scores, "bert")
    with pytest.raises(TypeError, match=r"^scope must be a str \('all' or a family\), not"):
        equilibrium(table, scope=None)  # type: ignore[arg-type]


def test_plan_names_a_round_given_for_its_scores(tables) -> None:
    with pytest.raises(TypeError, match=r"^scores must be a pandas DataFrame.*RoundTables$"):
        gpuscale.plan(workload="bert", accelerator="H100", devices=[8], scores=tables)
    planned = gpuscale.plan(workload="bert", accelerator="H100", devices=[8], scores=tables.scores)
    assert planned["accelerators"].tolist() == [8]
    assert planned["time_to_train_min"].iloc[0] > 0


def test_plan_names_the_columns_its_scores_lack_and_refuses_an_impossible_time(tables) -> None:
    """Scores lacking a column the plan reads were a pandas KeyError ('global_batch_size');
    a negative time was dropped unsaid, where every other table given refuses one."""
    scores = tables.scores
    with pytest.raises(ValueError, match=r"^scores lacks .*columns round and global_batch_size"):
        gpuscale.plan(
            workload="bert",
            accelerator="H100",
            scores=scores.drop(columns=["global_batch_size", "round"]),
        )
    edited = scores.copy()
    edited.loc[edited.index[0], "time_to_train_min"] = -1.0
    with pytest.raises(ValueError, match=r"^scores has 1 row whose time_to_train_min"):
        gpuscale.plan(workload="bert", accelerator="H100", scores=edited)
    # every global batch missing: the refusal said no result had a time, though all had
    batchless = scores.assign(global_batch_size=float("nan"))
    with pytest.raises(ValueError, match=r"^no closed-division MLPerf result") as refused:
        gpuscale.plan(workload="bert", accelerator="H100", scores=batchless)
    assert "with a time in" not in str(refused.value)
    assert "a global batch size" in str(refused.value)


def test_load_round_points_a_path_to_read_round_and_a_list_to_arguments() -> None:
    from pathlib import Path

    with pytest.raises(TypeError, match=r"read_round\('training_results_v5.0.tar.xz'\)"):
        gpuscale.load_round(Path("training_results_v5.0.tar.xz"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"load_round\('v4.0', 'v4.1'\)$"):
        gpuscale.load_round(["v4.0", "v4.1"])  # type: ignore[arg-type]


def test_read_results_takes_a_path_as_text(tmp_path) -> None:
    from gpuscale.bench.results import bench_table, read_results

    from .builders import bench_record, write_jsonl

    path = write_jsonl(tmp_path / "r.jsonl", [bench_record("mlp-1m", 10**6, 2, 900.0)])
    records, skipped = read_results(str(path))  # type: ignore[arg-type]
    assert (len(records), skipped) == (1, [])
    assert bench_table(records)["accelerators"].tolist() == [2]


def test_build_report_checks_its_arguments_as_analyze_does(tables, tmp_path) -> None:
    from gpuscale.report.html import build_report

    out = tmp_path / "my report"
    with pytest.raises(TypeError, match=r"^tables must be a gpuscale.tables.RoundTables"):
        build_report(tables.scores, ["bert"], out)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^workloads must be a list"):
        build_report(tables, "bert", out)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"'brt'.*'bert'"):
        build_report(tables, ["brt"], out)
    # a count of the wrong type is a TypeError, one out of range a ValueError
    with pytest.raises(TypeError, match=r"^workers must be a whole number"):
        build_report(tables, ["bert"], out, workers=True)
    with pytest.raises(ValueError, match=r"^workers must be a whole number of processes >= 1"):
        build_report(tables, ["bert"], out, workers=0)
    assert not out.exists()  # refused before anything is written
    # a folder given as text, and a workload as people spell it
    page = build_report(tables, ["BERT"], str(out))  # type: ignore[arg-type]
    assert page == out / "index.html" and page.exists()
    assert (out / "v4.1_bert_scaling.svg").exists()


def test_load_round_refuses_an_offline_that_is_no_bool() -> None:
    with pytest.raises(TypeError, match=r"^offline must be True or False"):
        gpuscale.load_round("v4.1", offline="no")  # type: ignore[arg-type]
    assert len(gpuscale.load_round("v4.1", offline=True).scores) > 0  # bundled: read offline


@pytest.mark.parametrize(
    ("keywords", "named"),
    [
        ({"division": 1}, "division"),
        ({"availability": 1}, "availability"),
        ({"families": 3}, "families"),
        ({"families": ["H100", 2]}, "families"),
    ],
)
def test_scaling_table_names_a_filter_of_another_type(tables, keywords, named) -> None:
    with pytest.raises(TypeError, match=f"^{named} must be"):
        scaling_table(tables.scores, "bert", **keywords)
    # one family as text is read as the command line reads it
    one = scaling_table(tables.scores, "bert", families="H100-SXM5-80GB")
    assert set(one["accelerator_family"]) == {"H100-SXM5-80GB"}


def test_scaling_table_columns_are_text_or_numbers_never_object(tables) -> None:
    """superlinear and outlier are text as every other text column (they were object)."""
    for reference in ("study", "family"):
        table = scaling_table(tables.scores, "bert", reference=reference)
        kinds = table.dtypes.astype(str)
        assert "object" not in set(kinds), kinds[kinds == "object"]
        assert kinds["superlinear"] == kinds["outlier"] == kinds["system_id"]
    assert (table["superlinear"] == "faster at N_ref").sum() == 9  # the family references'


def test_scaling_table_of_no_row_says_the_data_holds_no_workload(tables) -> None:
    with pytest.raises(UnknownNameError) as refused:
        scaling_table(tables.scores.iloc[:0], "bert")
    assert str(refused.value).endswith("; the data here holds no workload")
    assert "valid here" not in str(refused.value)


def test_an_empty_scaling_table_has_a_full_ones_dtypes(tables) -> None:
    """No system matching the filters gave every column object, numbers too."""
    full = scaling_table(tables.scores, "bert")
    empty = scaling_table(tables.scores, "bert", division="open")  # v4.1 ran none open
    assert empty.empty and list(empty.columns) == list(full.columns)
    assert empty.dtypes.astype(str).to_dict() == full.dtypes.astype(str).to_dict()


def test_scaling_table_duplicates_is_a_bool(tables) -> None:
    with pytest.raises(TypeError, match=r"^duplicates must be True or False, not 'no'"):
        scaling_table(tables.scores, "bert", duplicates="no")  # type: ignore[arg-type]
    once, both = (scaling_table(tables.scores, "llama2", duplicates=d) for d in (False, True))
    assert (len(once), len(both)) == (28, 29)  # the study's Table I: 29 with both names


def test_equilibrium_scope_is_all_or_a_family_of_the_table(tables) -> None:
    table = scaling_table(tables.scores, "bert")
    with pytest.raises(ValueError, match="'bogus'"):
        equilibrium(table, scope="bogus")
    with pytest.raises(TypeError, match="scope"):
        equilibrium(table, scope=3)  # type: ignore[arg-type]
    # a family of a table that holds others too: its picks would be other families'
    whole = equilibrium(table)
    assert {p.accelerator_family for p in whole.picks} != {"H100-SXM5-80GB"}
    with pytest.raises(ValueError, match="'H100-SXM5-80GB' is one family, but the table holds 7"):
        equilibrium(table, scope="H100-SXM5-80GB")
    own = scaling_table(tables.scores, "bert", families="H100-SXM5-80GB", reference="family")
    alone = equilibrium(own, scope="H100-SXM5-80GB")
    assert alone.scope == "H100-SXM5-80GB" and alone.picks
    assert {p.accelerator_family for p in alone.picks} == {"H100-SXM5-80GB"}


@pytest.mark.parametrize(
    ("keywords", "named"), [({"bench": "x.jsonl"}, "bench"), ({"workers": "2"}, "workers")]
)
def test_build_report_names_bench_and_workers_of_another_type(
    tables, tmp_path, keywords, named
) -> None:
    from gpuscale.report.html import build_report

    out = tmp_path / "report"
    with pytest.raises(TypeError, match=f"^{named} must be"):
        build_report(tables, ["bert"], out, **keywords)
    assert not out.exists()  # refused before anything is written


@pytest.mark.parametrize(
    ("keywords", "named"),
    [
        ({"availability": 5}, "availability"),
        ({"families": 3}, "families"),
        ({"families": ["H100", 2]}, "families"),
        ({"division": 5}, "division"),
    ],
)
def test_analysis_options_check_every_field_when_built(keywords, named) -> None:
    """Each field of another type is refused when the options are built, naming the
    field (``availability=5`` was an AttributeError deep inside ``analyze``)."""
    with pytest.raises((TypeError, ValueError), match=named):
        AnalysisOptions(**keywords)
    # one family as text is one family; the names are read against the tables later
    assert AnalysisOptions(families="H100").families == ("H100",)
    assert AnalysisOptions(families=[]).families is None


def test_analyze_takes_the_options_fields_as_keywords(tables) -> None:
    (keyword,) = analyze(tables, ["bert"], AnalysisOptions(reference="family"), n_boot=100)
    (built,) = analyze(tables, ["bert"], AnalysisOptions(reference="family", n_boot=100))
    assert len(keyword.references) == len(built.references) > 1
    assert keyword.table["time_to_train_min_ci_low"].equals(built.table["time_to_train_min_ci_low"])
    with pytest.raises(TypeError, match=r"^availability must be"):
        analyze(tables, ["bert"], availability=5)


@pytest.mark.parametrize(
    ("text", "held"),
    [("[1]", "an array"), ("null", "null"), ('"7B"', "a string"), ("3", "a number")],
)
def test_a_request_of_json_that_is_no_object_names_what_it_held(text: str, held: str) -> None:
    """An advice request of JSON that is no object says 'an advice request' and what the
    JSON held as JSON names it (an array, null), not Python's type (list, NoneType)."""
    from gpuscale.advice.request import AdviceRequest

    with pytest.raises(ValueError) as refused:
        AdviceRequest.from_json(text)
    assert str(refused.value) == f"an advice request is a JSON object, not {held}"


def test_none_for_a_number_with_a_default_names_the_default() -> None:
    """It said "nodes must be a number, not None (Nodes (NICs between them when > 1).)":
    the field's help in parentheses, and not what leaving it out gives."""
    for call, name, default in (
        (lambda: AnalysisOptions(n_boot=None), "n_boot", "2000"),
        (lambda: gpuscale.advise(params=7e6, step_ms=2, nodes=None), "nodes", "1"),
        (
            lambda: gpuscale.plan(workload="bert", accelerator="H100", threshold=None),
            "threshold",
            "0.8",
        ),
    ):
        with pytest.raises(TypeError, match=rf"^{name} must be a number, not None") as refused:
            call()
        assert f"(leave it out for its default, {default}): " in str(refused.value)


def test_build_report_takes_a_bench_files_records_as_advise_does(tables, tmp_path) -> None:
    """Records as ``pd.read_json(path, lines=True)`` reads them were a pandas KeyError
    ('batch_per_device') inside the bench section; they are read as the file is."""
    from pathlib import Path

    import pandas as pd

    from gpuscale.bench.results import load_bench
    from gpuscale.report.html import build_report
    from tests.builders import undated

    path = Path(__file__).parent / "cpu_mlp_gloo.jsonl"
    records = pd.read_json(path, lines=True)
    by_records = build_report(tables, ["bert"], tmp_path / "a", bench=records)
    by_table = build_report(tables, ["bert"], tmp_path / "b", bench=load_bench(path).table)
    assert undated(by_records.read_text()) == undated(by_table.read_text())  # its minute aside
    # a table lacking a column the section reads: named, not a KeyError inside it
    lacking = load_bench(path).table.drop(columns=["samples_per_s"])
    with pytest.raises(ValueError, match=r"^bench lacks the bench table's column samples_per_s "):
        build_report(tables, ["bert"], tmp_path / "c", bench=lacking)
    with pytest.raises(
        ValueError, match=r"columns source, key, sweep_id, status, model and \d+ more"
    ):
        build_report(tables, ["bert"], tmp_path / "c", bench=pd.DataFrame({"x": [1]}))
    assert not (tmp_path / "c").exists()
