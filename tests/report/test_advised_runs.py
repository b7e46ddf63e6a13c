"""The runs the report sets beside its advice are the runs the advice read: on a file of
two sweeps of one configuration (2 steps, then 30), the longer sweep's at every count,
the shorter one left out as outlasted, never shown as a measurement of its own."""

from __future__ import annotations

from pathlib import Path

import gpuscale
from gpuscale.analysis.bench_scaling import bench_scaling, speedups_as_predicted
from gpuscale.bench.results import bench_table, read_results
from gpuscale.report.bench_answer import advised_runs, advised_scope, others_answer, outlasted

TWO_SWEEPS = Path(__file__).parents[1] / "advice" / "cpu_mlp_two_sweeps_gloo.jsonl"


def test_the_reports_advised_runs_are_the_advices_measured_runs() -> None:
    scaling = bench_scaling(bench_table(read_results(TWO_SWEEPS)[0]))
    advice = gpuscale.advise(bench=TWO_SWEEPS)
    advised = advised_runs(scaling, advice.calibration)
    assert scaling.loc[advised, "steps"].tolist() == [30, 30]
    assert outlasted(scaling).tolist() == (scaling["steps"] == 2).tolist()
    # the N > 1 speedups the report checks as the advice's: the advice's own measurements,
    # each over the one-device step the prediction models (not the table's bare-step ratio)
    shown = scaling[advised & (scaling["accelerators"] > 1)]
    over = speedups_as_predicted(scaling).loc[shown.index, "speedup"]
    measured = [(m.devices, m.speedup) for m in advice.calibration.runs.measured]
    assert list(zip(shown["accelerators"], over, strict=True)) == measured
    assert advised_scope(scaling, advised, advice.calibration).startswith("mlp-0.2m (30 steps)")
    # the outlasted run answers nothing: it is no other run "the advice is not on"
    assert others_answer(scaling, advised, advice.calibration) is None
