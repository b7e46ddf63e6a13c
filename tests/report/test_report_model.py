"""The report's advice is on the model asked (``--model``, as ``gpuscale advise --bench``
takes it): the report's own advice said "--model to choose another" while ``gpuscale
report --advise --model tf-7m`` failed "No such option: --model" (a new user's walk)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.bench.results import bench_table, read_results
from gpuscale.cli import app
from gpuscale.report.bench_advice import advice_on_bench
from gpuscale.report.request import ReportRequest
from gpuscale.tables.requests import FieldError

ROWS = Path(__file__).parent / "h100_paths.jsonl"
runner = CliRunner()


def test_the_report_advises_on_the_model_asked() -> None:
    bench = bench_table(read_results(ROWS)[0])
    default = advice_on_bench(bench, ReportRequest(advise=True).advice_request())
    assert default.advice is not None
    other = next(
        m for m in sorted(set(bench["model"])) if m != default.advice.calibration.model.name
    )
    given = advice_on_bench(bench, ReportRequest(advise=True, model=other).advice_request())
    assert given.advice is not None and given.advice.calibration.model.name == other
    command = gpuscale.advise(bench=ROWS, model=other)
    assert given.advice.predictions["step_ms"].equals(command.predictions["step_ms"])


def test_a_model_not_in_the_file_is_said_by_its_option_and_model_needs_advise() -> None:
    bench = bench_table(read_results(ROWS)[0])
    refused = advice_on_bench(bench, ReportRequest(advise=True, model="tf-3m").advice_request())
    assert refused.advice is None and refused.refused.startswith("--model tf-3m: not in")
    with pytest.raises(FieldError):
        ReportRequest(model="tf-7m")  # without --advise there is no advice to ask of
    help_text = CliRunner().invoke(app, ["report", "--help"]).output
    assert "--model" in help_text


def test_a_model_typed_wrong_writes_nothing_and_exits_2_as_advise_does(tmp_path) -> None:
    """A typo in --model was taken as advice that could not be given: the whole report
    written, a warning, exit 1; ``advise --bench`` refuses the same value with exit 2."""
    out = tmp_path / "a report"  # a path with a space
    args = ["--bench", str(ROWS), "--model", "tf-3m"]
    result = runner.invoke(app, ["report", *args, "--advise", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert f"--model tf-3m: not in {ROWS}" in " ".join(result.stderr.split())
    assert not out.exists()  # nothing written
    assert runner.invoke(app, ["advise", *args]).exit_code == 2


def test_a_family_of_one_system_is_said_to_have_no_scaling_not_to_be_missing(tmp_path) -> None:
    """A walk: a round of one RTX A5000 system led the report with "none within RTX
    A5000: no RTX A5000 system"."""
    from gpuscale import read_round
    from gpuscale.analysis.analyze import analyze
    from gpuscale.report.recommend import recommend

    from ..mlperf.logbuilder import RoundBuilder

    rb = RoundBuilder()
    rb.system("Krai", "box2", model="NVIDIA RTX A5000", per_node="2")
    rb.runs("Krai", "box2", "bert", [300, 310, 305, 320, 290, 300, 310, 305, 320, 290])
    result = analyze(read_round(rb.write_dir(tmp_path)), ["bert"])[0]
    rec = recommend(result)
    assert rec.accelerators is None and rec.family == "RTX A5000"
    assert rec.why_none.startswith("1 RTX A5000 system only")


def test_a_family_whose_outliers_leave_one_count_says_so(tmp_path, golden) -> None:
    """Three submitters at 8 far apart (10, 15 and 22 min) and the slow one alone at 16:
    the fast and the slow are outliers, the middle one is left alone at 8. The answer
    said "4 RTX A5000 systems only", as if the family had run one count."""
    from gpuscale import read_round
    from gpuscale.analysis.analyze import analyze
    from gpuscale.report.page import report_headline
    from gpuscale.report.recommend import recommend

    from ..mlperf.logbuilder import RoundBuilder

    rb = RoundBuilder()
    for org, n, minutes in [("a", 8, 100), ("m", 8, 150), ("z", 8, 220), ("z", 16, 130)]:
        rb.system(org, f"{org}{n}", model="NVIDIA RTX A5000", per_node=str(n), submitter=org)
        spread = (1.0, 1.01, 0.99, 1.02, 0.98, 1.0, 1.01, 0.99, 1.02, 0.98)
        rb.runs(org, f"{org}{n}", "bert", [minutes * f for f in spread])
    result = analyze(read_round(rb.write_dir(tmp_path)), ["bert"])[0]
    assert sorted(set(result.table["accelerators"])) == [8, 16]
    rec = recommend(result)
    assert rec.accelerators is None and rec.family == "RTX A5000"
    assert sorted(o.split(":")[0] for o in rec.outliers) == ["a a8", "z z16", "z z8"]
    (line,) = report_headline([rec])
    golden.check("report/first_screen", "outliers leave one count: no scaling, said", line)
