"""`gpuscale report` on a synthetic round of every MLPerf Training ruleset (0.7.0 to 6.1.0),
with results lacking the fields real old rounds lack: every benchmark of the ruleset
scored and given a section, a figure with nothing to draw (MiniGo logs no global batch)
said in words instead of a crash."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.mlperf.benchmarks import workload_in_round
from gpuscale.mlperf.ingest import read_round
from gpuscale.mlperf.rules import benchmarks_of
from gpuscale.tables import display_name

from ..mlperf.synthetic_rounds import HARDWARE, round_of, ruleset_round
from .ragged import RAGGED, with_ragged

pytest.importorskip("mlperf_logging")
runner = CliRunner()


@pytest.mark.slow
@pytest.mark.parametrize("ruleset", sorted(HARDWARE))
def test_report_on_a_round_of_every_ruleset(tmp_path: Path, ruleset: str) -> None:
    """With results that lack what real old rounds lack (``ragged.with_ragged``: a system
    file without counts or names, logs without a global batch or throughput, power logs
    without readings), the report is written all the same."""
    ragged = next(b for b in benchmarks_of(ruleset) if b != "minigo")
    root = with_ragged(ruleset_round(ruleset), ruleset, ragged).write_dir(tmp_path)
    tables = read_round(root)
    scores = tables.scores
    lacking = scores[scores["system_id"].isin(RAGGED)]
    copied = ["submitter", "system_name", "division", "availability", "accelerator_model"]
    copied += ["accelerator_family", "nodes", "accelerators", "time_to_train_min"]
    blank = lacking[copied].isna().any()  # each field a score copies from its system
    assert blank.all(), blank
    assert lacking["samples_to_converge"].isna().all()
    unscored = scores[scores["time_to_train_min"].isna() & ~scores["system_id"].isin(RAGGED)]
    assert unscored.empty, unscored[["benchmark", "system_id", "score_reason"]]
    out = tmp_path / "report"
    # the convergence figure, which MiniGo's logs cannot give, is drawn on request only
    every = ["--all-figures"] if "minigo" in benchmarks_of(ruleset) else []
    result = runner.invoke(app, ["report", str(root), "-b", "all", "--out", str(out), *every])
    assert result.exit_code == 0, result.output
    html = (out / "index.html").read_text()
    name = round_of(ruleset)
    for folder in dict.fromkeys(benchmarks_of(ruleset)):
        title = f"{display_name(workload_in_round(folder, name))} ({name})"
        assert f"<h2>{title}</h2>" in html, title
    if "minigo" in benchmarks_of(ruleset):
        assert "not drawn, the logs give no global batch" in html


def test_a_workload_of_cpu_only_systems_is_said_not_silently_missing(tmp_path: Path) -> None:
    """v0.7 MiniGo on Intel CPUs (0 accelerators a node): no section, and `report` and
    `analyze` say why instead of nothing. With no other section the report would be an
    empty page: it exits 2 with the reason in one line, and the report already in --out
    (another round's) is left as it was, not replaced by that page."""
    from ..mlperf.logbuilder import RoundBuilder, result_log

    rb = RoundBuilder(name="training_results_v0.7")
    rb.system("Intel", "cpx", nodes="1", per_node="0", model="N/A")
    for i in range(10):
        log = result_log(benchmark="minigo", ruleset="0.7.0", gbs=None, minutes=300 + i, seed=i)
        rb.raw(f"Intel/results/cpx/minigo/result_{i}.txt", log)
    root = rb.write_dir(tmp_path)
    out = tmp_path / "report"
    earlier = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [3, 2, 4])
    earlier_root = earlier.write_dir(tmp_path / "v41")
    kept = runner.invoke(app, ["report", str(earlier_root), "--out", str(out)])
    assert kept.exit_code == 0, kept.output
    files = {p.name: p.read_bytes() for p in out.iterdir()}
    result = runner.invoke(app, ["report", str(root), "-b", "minigo", "--out", str(out)])
    assert result.exit_code == 2, result.output
    said = "v0.7 minigo: its 1 scored system has no accelerator count"
    (error,) = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert said in error and "no report was written" in error, result.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files
    analysed = runner.invoke(app, ["analyze", str(root), "-b", "minigo"])
    assert analysed.exit_code == 2
    assert "has no accelerator count (CPU-only" in " ".join(analysed.stderr.split())
