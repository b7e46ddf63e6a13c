"""With no --strategy the advice predicts the strategy the model was benched with, and
says so; the report's advice is the command's (an H100 walk: tf-30m, benched with
``--strategy fsdp``, was predicted as DDP by default under a title naming no strategy,
and the report, which had no way to ask for one, showed that DDP prediction)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.explain.document import advice_view
from gpuscale.report.request import ReportRequest
from gpuscale.tables.requests import FieldError

from ..golden import Golden
from .lines import lines_on

VIEW = "advice/default_strategy"

ROWS = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"


def _benched_strategy(model: str) -> str:
    for line in ROWS.read_text().splitlines():
        row = json.loads(line)
        if row["config"]["model"] == model and row["status"] == "ok":
            return str(row["config"]["strategy"])
    raise AssertionError(f"no ok row of {model}")


@pytest.mark.parametrize("model", ["tf-30m", "tf-7m"])
def test_the_default_predicts_what_was_benched(model: str, golden: Golden) -> None:
    benched = _benched_strategy(model)
    default = gpuscale.advise(bench=ROWS, model=model)
    asked = gpuscale.advise(bench=ROWS, model=model, strategy=benched)
    assert default.calibration.run.strategy == benched
    step = ["step_ms", "exposed_comm_ms", "comm_ms", "latency_ms"]
    assert default.predictions[step].equals(asked.predictions[step])
    title = advice_view(default, terminal=True).title
    assert f"with {benched.upper()}" in title
    said = " ".join(default.explanation)
    assert "STRATEGY:" not in said  # no warning of a strategy other than the one benched
    other = "ddp" if benched == "fsdp" else "fsdp"
    line = lines_on(default.explanation, "Strategy:")
    assert f"Strategy: {benched.upper()}" in line and f"strategy={other!r}" in line
    golden.check(VIEW, f"the strategy benched, {model}", line)
    assert (
        gpuscale.advise(bench=ROWS, model=model, strategy=other).calibration.run.strategy == other
    )


def test_the_fsdp_bench_is_the_premise() -> None:
    assert _benched_strategy("tf-30m") == "fsdp"
    assert _benched_strategy("tf-7m") == "ddp"


def test_the_json_names_the_strategy_predicted() -> None:
    from gpuscale.advice.explain.as_json import advice_document

    doc = advice_document(gpuscale.advise(bench=ROWS, model="tf-30m"))
    assert doc["recommendation"]["strategy"] == "fsdp"


def test_the_report_asks_what_the_command_asks() -> None:
    report = ReportRequest(advise=True)
    assert report.advice_request().strategy is None  # as `advise --bench` with no option
    given = ReportRequest(advise=True, strategy="FSDP")
    assert given.strategy == "fsdp" and given.advice_request().strategy == "fsdp"
    with pytest.raises(FieldError):
        ReportRequest(strategy="ddp")  # without --advise there is no prediction to ask of
    with pytest.raises(FieldError):
        ReportRequest(advise=True, strategy="zero3")


def test_the_reports_advice_predicts_and_names_what_was_benched(
    tmp_path: Path, golden: Golden
) -> None:
    from gpuscale.advice.explain.document import table_title
    from gpuscale.advice.model.priors import strategy_name
    from gpuscale.bench.results import bench_table, read_results
    from gpuscale.report.bench_advice import advice_on_bench
    from gpuscale.report.bench_section import build_bench_section
    from gpuscale.report.svg import FigureFiles

    bench = bench_table(read_results(ROWS)[0])
    given = advice_on_bench(bench, ReportRequest(advise=True).advice_request())
    assert given.advice is not None
    model = given.advice.calibration.model.name
    benched = _benched_strategy(model)
    # the command's words: the same advice, its fields named as the command line's options
    command = replace(gpuscale.advise(bench=ROWS, model=model), keywords=False)
    assert given.advice.predictions["step_ms"].equals(command.predictions["step_ms"])
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=given)
    assert section is not None
    titles = [title for title, _, _ in section.figures]
    golden.check(VIEW, "the report's figure titles", "\n".join(titles))
    svg = next(svg for title, svg, _ in section.figures if title.startswith("Predicted"))
    # the figure is titled as the advice's own table: the model, the benched strategy by name
    said = table_title(given.advice.calibration)
    drawn = " ".join(re.findall(r"<text[^>]*>([^<]*)</text>", svg))  # a title line a text
    assert (
        f"Advice: {said}" in drawn and model in said and f"with {strategy_name(benched)} on" in said
    )
    # the report says the strategy line the command says
    line = lines_on(command.explanation, "Strategy:")
    assert f"Strategy: {benched.upper()}" in line
    assert any(line in finding for finding in section.findings)
