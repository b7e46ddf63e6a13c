"""How ``gpuscale`` prints a bench table: the ok runs with their speedups, flagged and
failed runs below, and the JSON document of ``--format json``."""

from __future__ import annotations

from pathlib import Path

from gpuscale.cli.common import err, out
from gpuscale.cli.output import Format, jsonable, print_frame


def bench_json(table) -> dict:
    """The bench table's scaling, failed runs and break-even sizes, JSON-ready."""
    # lazy: pandas (the bench analysis), not needed for --help
    from gpuscale.analysis.bench_scaling import (
        baseline_sentence,
        bench_scaling,
        break_even_params,
        break_even_sentence,
    )

    scaling = bench_scaling(table)
    worlds = sorted(set(scaling["accelerators"]) - {1}) if len(scaling) else []
    return jsonable(
        {
            "source": "bench",
            "runs": scaling.to_dict("records"),
            "failed": table[table["status"] != "ok"][
                ["model", "accelerators", "status", "error"]
            ].to_dict("records"),
            "break_even_params": {str(w): break_even_params(scaling, w) for w in worlds},
            "break_even": {str(w): break_even_sentence(scaling, w) for w in worlds},
            "baseline": baseline_sentence(scaling),
        }
    )


BENCH_SHOWN = [
    "configuration",
    "params",
    "accelerators",
    "step_ms_mean",
    "plain_step_ms_mean",
    "samples_per_s",
    "ddp_overhead_ms",
    "exposed_comm_ms",
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
    from gpuscale.analysis.bench_scaling import bench_scaling

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
    _print_notes(scaling, failed)
    if earlier:
        out.print(earlier, markup=False, highlight=False)


def earlier_rows(scaling, failed, path) -> str | None:
    """One line counting a results file's rows of earlier sweeps (None without any)."""
    rows = len(scaling) + len(failed)
    if not rows:
        return None
    flagged = int(scaling["flagged"].sum())
    parts = [f"{len(scaling) - flagged} ok", f"{flagged} flagged", f"{len(failed)} failed"]
    return (
        f"earlier runs: {path} also holds {rows} row{'' if rows == 1 else 's'} of earlier "
        f"sweeps ({', '.join(parts)}), not summarised here: gpuscale analyze --bench {path} "
        "reads them all"
    )


def _print_notes(scaling, failed) -> None:
    """Below the table: flagged rows' reasons, failed runs, weak evidence, break-even
    sizes and what the CPU baseline is."""
    # lazy: pandas (the bench analysis), not needed for --help
    from gpuscale.analysis.bench_scaling import baseline_sentence, break_even_sentence

    if not scaling.empty:
        out.print(
            "speedup and efficiency: against the plain N = 1 step (the bare module, what one "
            "device costs) where timed, else DDP's N = 1 step; speedup_ddp: against DDP's "
            "N = 1 step (it carries DDP's own overhead)",
            markup=False,
            highlight=False,
        )
    for row in scaling[scaling["flagged"]].itertuples(index=False):
        out.print(
            f"flagged {row.model} on {row.accelerators}: {row.flags}", markup=False, highlight=False
        )
    for row in failed.itertuples(index=False):
        out.print(
            f"{row.status} {row.model} on {row.accelerators}: {row.error}",
            markup=False,
            highlight=False,
        )
    for row in scaling[~scaling["flagged"] & (scaling["evidence"] == "weak")].itertuples():
        out.print(
            f"weak evidence {row.model} on {row.accelerators}: {row.evidence_notes}",
            markup=False,
            highlight=False,
        )
    for world in sorted(set(scaling["accelerators"]) - {1}):
        out.print(break_even_sentence(scaling, world), markup=False, highlight=False)
    baseline = baseline_sentence(scaling)
    if baseline:
        out.print(baseline, markup=False, highlight=False)
