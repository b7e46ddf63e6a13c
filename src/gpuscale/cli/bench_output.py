"""How ``gpuscale`` prints a bench table: the ok runs with their speedups, flagged and
failed runs below, and the JSON document of ``--format json``."""

from __future__ import annotations

from pathlib import Path

from gpuscale.cli.common import err, out
from gpuscale.cli.output import Format, jsonable, print_frame


def bench_json(table) -> dict:
    """The bench table's document (``analysis.bench_scaling.bench_document``), JSON-ready."""
    from gpuscale.analysis.bench_scaling import bench_document  # lazy: pandas, not for --help

    return jsonable(bench_document(table))


BENCH_SHOWN = [
    "configuration",
    "params",
    "accelerators",
    "step_ms_mean",
    "plain_step_ms_mean",
    "samples_per_s",
    "ddp_overhead_ms",
    "exposed_comm_ms",
    "sync_wait_ms",
    "comm_ms",
    "overlap",
    "achieved_tflops_per_device",
    "mfu",
    "speedup",
    "efficiency",
    "speedup_ddp",
    "flagged",
    "evidence",
]


def print_bench(
    table, fmt: Format = Format.table, *, sweep: str | None = None, path: Path | None = None
) -> None:
    """The bench table (ok runs) with speedups; flagged rows' reasons and failed runs
    listed below it. With ``sweep`` (the id of the ``gpuscale bench`` call that just ran,
    its rows in the results file ``path``): that sweep's rows only, read against the
    whole file (an N = 1 run that ``--resume`` skipped is still their baseline), and the
    file's earlier rows counted in one line, never listed as this run's."""
    # lazy: pandas (the bench analysis), not needed for --help
    from gpuscale.analysis.bench_scaling import bench_notes, bench_scaling, earlier_rows

    scaling = bench_scaling(table)
    failed = table[table["status"] != "ok"]
    earlier = None
    if sweep is not None:
        mine, theirs = scaling["sweep_id"] == sweep, failed["sweep_id"] == sweep
        earlier = earlier_rows(scaling[~mine], failed[~theirs], path)
        scaling, failed = scaling[mine], failed[theirs]
    if scaling.empty:
        err.print(f"no successful bench run {'in this sweep ' if sweep else ''}to analyse")
    else:
        title = "this sweep's results (ok runs)" if sweep else "bench results (ok runs)"
        print_frame(out, scaling[BENCH_SHOWN], fmt, title=title)
    if fmt is not Format.table:
        return
    for line in [*bench_notes(scaling, failed), *([earlier] if earlier else [])]:
        out.print(line, markup=False, highlight=False)
