"""How ``gpuscale`` prints a bench table: the ok runs with their speedups, flagged and
failed runs below, and the JSON document of ``--format json``."""

from __future__ import annotations

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


def print_bench(table, fmt: Format = Format.table) -> None:
    """The bench table (ok runs) with speedups; flagged rows' reasons and failed runs
    listed below it."""
    # lazy: pandas (the bench analysis), not needed for --help
    from gpuscale.analysis.bench_scaling import (
        baseline_sentence,
        bench_scaling,
        break_even_sentence,
    )

    scaling = bench_scaling(table)
    failed = table[table["status"] != "ok"]
    if scaling.empty:
        err.print("no successful bench run to analyse")
    else:
        print_frame(out, scaling[BENCH_SHOWN], fmt, title="bench results (ok runs)")
    if fmt is not Format.table:
        return
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
