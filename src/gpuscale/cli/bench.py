"""The bench command: measure training-step scaling on this machine (or several)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from gpuscale.bench.config import BenchConfig
from gpuscale.cli.common import app, err, fail, fail_on, out, require_torch, show
from gpuscale.cli.options import command, option_names, request_of
from gpuscale.cli.output import Format, print_frame


@command(app, "bench", BenchConfig, at="resume")
def bench(
    out_file: Annotated[Path, typer.Option("--out", help="Results file (JSONL, appended).")] = Path(
        "results.jsonl"
    ),
    models: Annotated[
        str | None,
        typer.Option(
            "--models",
            help="Comma-separated models: ladder names (see --list), torchvision:NAME, "
            "timm:NAME, PKG.MODULE:FACTORY or FILE.py:FACTORY; default: the ladder.",
        ),
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option("--model", help="One more model (repeatable), e.g. mypkg.models:make."),
    ] = None,
    max_params: Annotated[str | None, typer.Option(help="Largest model, e.g. 2M.")] = None,
    min_params: Annotated[str | None, typer.Option(help="Smallest model, e.g. 1M.")] = None,
    nproc: Annotated[
        str | None,
        typer.Option(help="Processes per node, e.g. 1,2,4 (default: 1, 2, 4, ... all devices)."),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            help="Skip runs already measured in --out with the same configuration "
            "(default: measure everything and append)."
        ),
    ] = False,
    oversubscribe: Annotated[
        bool,
        typer.Option(
            "--oversubscribe", help="Allow more CPU processes per node than the host has cores."
        ),
    ] = False,
    nnodes: Annotated[int, typer.Option(help="Nodes (run this command on each).")] = 1,
    node_rank: Annotated[int, typer.Option(help="This node's rank, 0 .. nnodes - 1.")] = 0,
    rdzv_endpoint: Annotated[
        str | None, typer.Option(help="HOST:PORT of node 0 (torchrun c10d rendezvous).")
    ] = None,
    list_models: Annotated[bool, typer.Option("--list", help="List the models and stop.")] = False,
    **options: Any,
) -> None:
    """Measure training-step scaling on this machine (torchrun, one process per device).

    Exit status: 0 every run measured; 1 a run failed (its row says why); 2 nothing ran
    (bad options, no model could be built, the results file cannot be written); 130, 143
    and 129 interrupted, terminated or hung up (the rows written so far are kept)."""
    require_torch("the benchmark")
    # lazy: torch (the model ladder) and numpy (the runner), only the bench needs them
    from gpuscale.bench.models import ModelError
    from gpuscale.bench.results import ResultsError
    from gpuscale.bench.runner import run_sweep, world_sizes
    from gpuscale.bench.sweep_plan import check_bounds, choose_models, plan_sentence, plan_sweep

    with fail_on(ValueError, options=option_names(BenchConfig)):
        check_bounds(max_params, min_params)
        bench = request_of(BenchConfig, options)
        nproc_sizes = world_sizes(nproc)
    names = [*(models.split(",") if models else []), *(model or [])]
    with fail_on(ModelError, ValueError):
        chosen, broken = choose_models(names, max_params, min_params, bench)
    if list_models:
        _print_models(chosen, broken)
        return
    with fail_on(ValueError):
        cfg = plan_sweep(
            chosen,
            broken,
            nproc=nproc_sizes,
            out=out_file,
            bench=bench,
            resume=resume,
            nnodes=nnodes,
            node_rank=node_rank,
            rdzv_endpoint=rdzv_endpoint,
            oversubscribe=oversubscribe,
        )
    err.print(plan_sentence(cfg, broken), markup=False, highlight=False)
    with fail_on(ResultsError, ValueError):
        report = run_sweep(cfg, dict(chosen), on_event=_on_event, broken=dict(broken))
    _print_results(out_file, report.sweep_id)
    _say_done(report, out_file, nnodes)
    if not chosen:  # every model asked for failed to build: their error rows are written
        fail("no model could be built: " + "; ".join(str(why) for _, why in broken))
    if report.interrupted:
        err.print("interrupted: the rows above are saved")
        raise typer.Exit(130)
    if report.failures:
        raise typer.Exit(1)


def _on_event(message: str) -> None:
    """A sweep's progress line (a run started, done, failed) on stderr."""
    err.print(f"  {message}", markup=False, highlight=False)


def _print_models(chosen: list[tuple[str, int]], broken: list[tuple[str, object]]) -> None:
    """``bench --list``: each model with its family and size, those that cannot be built
    last."""
    import pandas as pd  # lazy: pandas, only --list needs it

    from gpuscale.bench.models import family_of  # lazy: torch (the model ladder)

    rows = [{"model": n, "family": family_of(n), "params": p} for n, p in chosen]
    rows += [{"model": n, "family": "cannot be built", "params": None} for n, _ in broken]
    print_frame(out, pd.DataFrame(rows), Format.table, title="models")


def _print_results(out_file: Path, sweep_id: str) -> None:
    """This sweep's runs (rows marked ``sweep_id``), read against the whole results file;
    the file's earlier rows and unreadable lines counted, said as earlier (a file too
    large to show: a note)."""
    # lazy: numpy (the results reader), only the bench needs it
    from gpuscale.bench.results import ResultsError, load_bench

    if not out_file.exists():
        return
    try:
        loaded = load_bench(out_file)
    except ResultsError as exc:
        err.print(f"note: the results are not shown: {exc}", markup=False, highlight=False)
        return
    if loaded.skipped:  # this sweep appends whole rows (a row cut short is taken back)
        err.print(
            f"note: {len(loaded.skipped)} unreadable line(s) in {out_file}, written before "
            f"this sweep, skipped (gpuscale analyze --bench {out_file} lists them)",
            markup=False,
            highlight=False,
        )
    from gpuscale.analysis.bench_scaling import bench_view  # lazy: pandas, only the bench

    show(bench_view(loaded.table, sweep=sweep_id, path=out_file), Format.table)


def _say_done(report, out_file: Path, nnodes: int) -> None:
    """What the sweep did (``gpuscale.bench.sweep_plan.done_sentence``), on stderr."""
    from gpuscale.bench.sweep_plan import done_sentence  # lazy: the runner, only the bench

    err.print(done_sentence(report, out_file, nnodes), markup=False, highlight=False)
