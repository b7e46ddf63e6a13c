"""The Python API as a notebook meets it: each result's repr its answer and the fields to
read (not every table inside), help() naming every keyword, a request's fields replaced by
keywords alike in advise and plan, and a bench given as the DataFrame pandas reads."""

from __future__ import annotations

import dataclasses
import inspect
import json
import pydoc
from pathlib import Path

import pandas as pd
import pytest

import gpuscale
from gpuscale.advice.explain.answer import shown
from gpuscale.advice.request import AdviceRequest
from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.bench.results import ResultsError
from gpuscale.planning import PlanRequest

# `gpuscale bench --backend gloo --models mlp-0.2m --nproc 1,2 --steps 20`: both runs
# flagged (noisy) on the machine that measured them
BENCH = Path(__file__).parent / "cpu_mlp_gloo.jsonl"
# A notebook cell's first screen: the answer, not the tables inside
SHORT = 2_000


def _fields_named(text: str) -> list[str]:
    """The attributes the repr's last line names (``fields: .a, .b``)."""
    last = text.splitlines()[-1]
    return [name.strip().lstrip(".") for name in last.split(":", 1)[1].split(",")]


@pytest.fixture(scope="module")
def advice():
    return gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb")


def test_advice_repr_is_the_short_answer_and_the_fields(advice) -> None:
    text = repr(advice)
    assert len(text) < SHORT
    lines = text.splitlines()
    # the answer `gpuscale advise` prints first, line by line, then the fields
    assert [line.removeprefix("  ") for line in lines[1:-1]] == shown(advice)
    named = _fields_named(text)
    assert {"recommended", "predictions", "explanation"} <= set(named)
    assert all(hasattr(advice, name) for name in named)
    assert advice.predictions is not None and len(advice.explanation) > 5  # data kept


def test_the_other_results_repr_short_with_fields_that_exist() -> None:
    tables = gpuscale.load_round("v4.1")
    eq = gpuscale.equilibrium(gpuscale.scaling_table(tables.scores, "bert", reference="family"))
    (analysis,) = analyze(tables, ["bert"], AnalysisOptions(n_boot=100))
    for result, lines in ((tables, 1), (eq, 1 + len(eq.unpicked)), (analysis, 1)):
        text = repr(result)
        assert len(text) < SHORT and len(text.splitlines()) >= 2 + lines - 1
        assert all(hasattr(result, name) for name in _fields_named(text))
    assert f"{len(tables.runs):,} runs" in repr(tables)
    assert len(repr(eq).splitlines()) == 2 + len(eq.picks) + len(eq.unpicked)


@pytest.mark.parametrize(
    ("call", "request_type", "own"),
    [(gpuscale.advise, AdviceRequest, {"bench"}), (gpuscale.plan, PlanRequest, set())],
)
def test_signature_lists_every_field_with_its_default(call, request_type, own) -> None:
    params = inspect.signature(call).parameters
    assert not [p for p in params.values() if p.kind is p.VAR_KEYWORD]
    for f in dataclasses.fields(request_type):
        if f.init and f.name not in own:
            assert f.name in params, f.name
            if f.default is not dataclasses.MISSING:
                assert params[f.name].default == f.default, f.name
    shown_by_help = pydoc.render_doc(call)
    assert all(f.name in shown_by_help for f in dataclasses.fields(request_type) if f.init)


def test_plan_replaces_a_requests_fields_as_advise_does() -> None:
    request = PlanRequest(workload="bert", accelerator="H100", devices=(8, 64))
    table = gpuscale.plan(request, devices=[8])
    assert list(table["accelerators"]) == [8]
    alone = gpuscale.plan(workload="bert", accelerator="H100", devices=[8])
    pd.testing.assert_frame_equal(table, alone)
    advised = AdviceRequest(params=7e6, step_ms=2, batch=64, interconnect="pcie-phb")
    assert gpuscale.advise(advised, batch=32).predictions["batch_per_device"].iloc[0] == 32


def test_bench_as_pandas_reads_the_results_file() -> None:
    frame = pd.read_json(BENCH, lines=True)
    read = gpuscale.advise(bench=frame, allow_flagged=True)
    from_file = gpuscale.advise(bench=str(BENCH), allow_flagged=True)
    assert read.recommended == from_file.recommended
    # pandas reads floats to 15 digits: the same numbers, not the same bits
    pd.testing.assert_frame_equal(
        read.predictions, from_file.predictions, check_exact=False, rtol=1e-9
    )


def test_a_bench_frame_row_that_is_no_record_is_skipped_and_said(tmp_path: Path) -> None:
    lines = [*BENCH.read_text().splitlines(), json.dumps({"schema": "other/1", "config": {}})]
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    frame = pd.read_json(path, lines=True)
    advice = gpuscale.advise(bench=frame, allow_flagged=True)
    assert any("1 row" in str(note) for note in advice.calibration.said.warnings)
    with pytest.raises(ResultsError):  # a ValueError, said: no row is a bench record
        gpuscale.advise(bench=frame.iloc[-1:], allow_flagged=True)


@pytest.mark.parametrize("lacking", ["config", "schema"])
def test_records_lacking_one_key_column_are_refused_as_records(lacking: str) -> None:
    """Records without config (or schema) were taken for a bench table: "the bench table
    lacks the columns source, model, family, params and 65 more"."""
    frame = pd.read_json(BENCH, lines=True).drop(columns=[lacking])
    with pytest.raises(ResultsError, match=f"^the bench DataFrame holds no .*row 0: .*{lacking}"):
        gpuscale.advise(bench=frame, allow_flagged=True)
