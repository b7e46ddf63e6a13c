"""The bench command: measure training-step scaling on this machine (or several)."""

from __future__ import annotations

from pathlib import Path

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
    if planned.chosen:  # else no table: each reason would be said a third time
        _print_results(request.out, ran.report.sweep_id, ran.report.skipped)
    say(ran.closing, stderr=True)
    if ran.refusal:  # every model asked for failed to build: their error rows are written
        fail(ran.refusal)
    if ran.status:
        raise typer.Exit(ran.status)


def _progress(said: str) -> None:
    """A sweep's progress line (a run started, done, failed) on stderr."""
    say([f"  {said}"], stderr=True)


def _print_results(out_file: Path, sweep_id: str, skipped: int = 0) -> None:
    """This sweep's runs (rows marked ``sweep_id``; ``skipped`` by --resume) read against
    the whole results file, its earlier rows and unreadable lines counted."""
    # lazy: numpy and pandas (the results reader, the bench table), only the bench needs them
    from gpuscale.analysis.bench_view import bench_view
    from gpuscale.bench.results import after_sweep

    loaded, notes = after_sweep(out_file)
    note(*notes)
    if loaded is not None:
        view = bench_view(loaded.table, sweep=sweep_id, path=out_file, skipped=skipped)
        show(view, Format.table)
