"""The bench command: measure training-step scaling on this machine (or several)."""

from __future__ import annotations

import typer

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.sweep_request import SweepRequest
from gpuscale.cli.common import app, require_torch
from gpuscale.cli.options import command, option_names
from gpuscale.cli.output import Format, fail, fail_on, note, out, print_records, say, show


@command(app, "bench")
def bench(request: SweepRequest, config: BenchConfig) -> None:
    """Measure training-step scaling on this machine (torchrun, one process per device).

    Exit status: 0 every run measured; 1 a run failed (its row says why); 2 nothing ran
    (bad options, no model could be built, the results file cannot be written); 130, 143
    and 129 interrupted, terminated or hung up (the rows written so far are kept)."""
    require_torch("the benchmark")
    # lazy: numpy (the runner), only the bench needs it; torch when the models are built
    from gpuscale.bench.config import ModelError
    from gpuscale.bench.results import ResultsError
    from gpuscale.bench.sweep_plan import models_table, plan_bench, run_planned

    with fail_on(ModelError, ValueError, options=option_names(SweepRequest, BenchConfig)):
        planned = plan_bench(request, config)
    if planned.config is None and not planned.said:  # --list
        print_records(out, models_table(planned), Format.table, title="models")
        return
    say([planned.said], stderr=True)
    if planned.config is None:  # a Slurm task: its node's first task runs the bench
        return
    with fail_on(ResultsError, ValueError):
        ran = run_planned(planned, on_event=_progress)
    note(*ran.results_notes)
    if ran.results is not None:  # this sweep's runs read against the whole results file
        from gpuscale.analysis.bench_view import bench_view  # lazy: numpy and pandas

        table, report = ran.results.table, ran.report  # its rows: those of report.sweep_id
        view = bench_view(table, sweep=report.sweep_id, path=request.out, skipped=report.skipped)
        show(view, Format.table)
    say(ran.closing, stderr=True)
    if ran.refusal:  # every model asked for failed to build: their error rows are written
        fail(ran.refusal)
    if ran.status:
        raise typer.Exit(ran.status)


def _progress(said: str) -> None:
    """A sweep's progress line (a run started, done, failed) on stderr."""
    say([f"  {said}"], stderr=True)
