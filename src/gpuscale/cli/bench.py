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
    # lazy: torch (the model ladder) and numpy (the runner), only the bench needs them
    from gpuscale.bench.models import ModelError
    from gpuscale.bench.results import ResultsError
    from gpuscale.bench.runner import kept_note, run_sweep
    from gpuscale.bench.sweep_plan import done_sentence, models_table, plan_bench

    with fail_on(ModelError, ValueError, options=option_names(SweepRequest, BenchConfig)):
        planned = plan_bench(request, config)
    if planned.config is None and not planned.said:  # --list
        print_records(out, models_table(planned), Format.table, title="models")
        return
    say([planned.said], stderr=True)
    if planned.config is None:  # a Slurm task: its node's first task runs the bench
        return
    chosen, broken, nnodes = planned.chosen, planned.broken, planned.config.nnodes
    with fail_on(ResultsError, ValueError):
        report = run_sweep(planned.config, dict(chosen), on_event=_progress, broken=dict(broken))
    if chosen:  # else no table: each reason would be said a third time
        _print_results(request.out, report.sweep_id, report.skipped)
    say([done_sentence(report, request.out, nnodes)], stderr=True)
    if not chosen:  # every model asked for failed to build: their error rows are written
        fail("no model could be built: " + "; ".join(str(why) for _, why in broken))
    if report.interrupted:
        say(["interrupted" + kept_note(report.appended, request.out)], stderr=True)
        raise typer.Exit(130)
    if report.failures:
        raise typer.Exit(1)


def _progress(said: str) -> None:
    """A sweep's progress line (a run started, done, failed) on stderr."""
    say([f"  {said}"], stderr=True)


def _print_results(out_file: Path, sweep_id: str, skipped: int = 0) -> None:
    """This sweep's runs (rows marked ``sweep_id``; ``skipped`` by --resume) read against
    the whole results file, its earlier rows and unreadable lines counted."""
    # lazy: numpy and pandas (the results reader, the bench table), only the bench needs them
    from gpuscale.analysis.bench_scaling import bench_view
    from gpuscale.bench.results import ResultsError, load_bench

    if not out_file.exists():
        return
    try:
        loaded = load_bench(out_file)
    except ResultsError as exc:
        return note(f"the results are not shown: {exc}")
    note(*loaded.unread_before(out_file))
    show(bench_view(loaded.table, sweep=sweep_id, path=out_file, skipped=skipped), Format.table)
