"""The bench command: measure training-step scaling on this machine (or several)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.sweep_request import SweepRequest
from gpuscale.cli.common import app, require_torch
from gpuscale.cli.options import command, option_names
from gpuscale.cli.output import Format, fail, fail_on, note, out, print_records, say, show

if TYPE_CHECKING:
    from gpuscale.bench.results import BenchFile


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
    _show_results(
        ran.results, ran.results_notes, request.out, ran.report.sweep_id, ran.report.skipped
    )
    say(ran.closing, stderr=True)
    if ran.refusal:  # every model asked for failed to build: their error rows are written
        fail(ran.refusal)
    if ran.status:
        raise typer.Exit(ran.status)


def _progress(said: str) -> None:
    """A sweep's progress line (a run started, done, failed) on stderr."""
    say([f"  {said}"], stderr=True)


def _show_results(
    results: BenchFile | None, notes: Sequence[str], out_file: Path, sweep_id: str, skipped: int
) -> None:
    """What the results file read back after a sweep says first (``notes``), then this
    sweep's runs (rows marked ``sweep_id``; ``skipped`` by --resume) read against the whole
    file; no table where it was not read (``sweep_plan.Ran.results``)."""
    note(*notes)
    if results is not None:
        from gpuscale.analysis.bench_view import bench_view  # lazy: numpy and pandas

        view = bench_view(results.table, sweep=sweep_id, path=out_file, skipped=skipped)
        show(view, Format.table)
