"""A bench table as a command shows it (:func:`bench_view`): the ok runs with their
speedups (``gpuscale.analysis.bench_scaling``), the columns a terminal shows of them,
and what is said under the table (flagged rows' reasons, failed runs, a sweep's earlier
rows)."""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.analysis.bench_sentences import bench_headline, bench_notes, earlier_rows
from gpuscale.quantities import counted, noun_for
from gpuscale.tables.views import TableView

# The columns a terminal shows of a bench table (CSV and JSON: every column).
BENCH_SHOWN = (
    "configuration",
    "platform",
    "params",
    "accelerators",
    "nnodes",  # only where a run spanned machines (``shown_columns``)
    "step_ms_mean",
    "plain_step_ms_mean",
    "samples_per_s",
    "ddp_overhead_ms",
    "fsdp_overhead_ms",
    "exposed_comm_ms",
    "sync_wait_ms",
    "comm_ms",
    "overlap",
    "achieved_tflops_per_device",
    "mfu",
    "speedup",
    "efficiency",
    "speedup_ddp",
    "speedup_fsdp",
    "ddp_vs_bare",
    "fsdp_vs_bare",
    "flagged",
    "evidence",
)


def bench_view(
    table: pd.DataFrame, *, sweep: str | None = None, path: object = None, skipped: int = 0
) -> TableView:
    """A bench table as a command shows it: the ok runs with their speedups, flagged rows'
    reasons and failed runs in words under it (:func:`bench_notes`). With ``sweep`` (the id
    of the ``gpuscale bench`` call that just ran, its rows in the results file ``path``;
    ``skipped``: the runs its ``--resume`` skipped): that sweep's rows only, read against
    the whole file (an N = 1 run that ``--resume`` skipped is still their baseline), the
    file's earlier rows counted in one line."""
    scaling = bench_scaling(table)
    failed = table[table["status"] != "ok"]
    earlier = None
    if sweep is not None:
        mine, theirs = scaling["sweep_id"] == sweep, failed["sweep_id"] == sweep
        earlier = earlier_rows(scaling[~mine], failed[~theirs], path)
        scaling, failed = scaling[mine], failed[theirs]
    these = "this sweep's" if sweep else "bench"
    return TableView(
        scaling,
        shown_columns(scaling),
        results_title(these, scaling, failed),
        # where the columns -f csv leaves out are (evidence_notes: a new user looked there)
        every=f"--columns takes any of all {len(scaling.columns)}, evidence_notes among "
        "them, and -f json prints them all",
        said=tuple(filter(None, [*bench_notes(scaling, failed, shown_columns(scaling)), earlier])),
        empty=_none_ok(sweep, skipped, failed) if scaling.empty else "",
        headline=bench_headline(scaling),
    )


def results_title(whose: str, scaling: pd.DataFrame, failed: pd.DataFrame) -> str:
    """A bench table's title, counting what it holds: ``bench results: 2 completed runs,
    2 flagged; 1 failed run, said under it`` (the rows are the runs that completed, flagged
    or not; a failed run has no row)."""
    title = f"{whose} results: {counted(len(scaling), 'completed run')}"
    if flagged := int(scaling.get("flagged", pd.Series(dtype=bool)).sum()):
        title += f", {flagged:,} flagged"
    if len(failed):
        title += f"; {counted(len(failed), 'failed run')}, said under it"
    return title


def shown_columns(scaling: pd.DataFrame) -> tuple[str, ...]:
    """``BENCH_SHOWN`` less each strategy's own columns where no row ran that strategy (a
    file of DDP runs shows no empty FSDP columns, one of FSDP runs no empty DDP ones), and
    less ``nnodes`` where every run ran on one machine (a run over several is told apart
    from one of as many devices on one host: its communication crossed the network)."""
    ran = set(scaling.get("strategy", pd.Series(dtype=str)).dropna()) or {"ddp"}  # DDP's alone
    absent = {s for s in ("ddp", "fsdp") if s not in ran}
    own = {f"{s}_overhead_ms" for s in absent} | {f"{s}_vs_bare" for s in absent}
    own |= {f"speedup_{s}" for s in absent}
    if not spans_machines(scaling):
        own.add("nnodes")
    return tuple(c for c in BENCH_SHOWN if c not in own)


def spans_machines(scaling: pd.DataFrame) -> bool:
    """Whether any run of ``scaling`` ran on more than one machine (``nnodes`` > 1; a row
    without the field ran on one)."""
    nodes = scaling.get("nnodes", pd.Series(dtype=float))
    return bool((pd.to_numeric(nodes, errors="coerce") > 1).any())


def none_ok(failed: pd.DataFrame) -> str:
    """What a file's bench table with no ok run says, and, where its runs failed, what
    to do: each one's cause is said under it."""
    if failed.empty:
        return "no successful bench run to analyse"
    return (
        "no successful bench run to analyse: each failed run's cause is said below; mend "
        "it and run the bench again with --resume (it measures only what is missing)"
    )


def _none_ok(sweep: str | None, skipped: int, failed: pd.DataFrame) -> str:
    """What a bench table with no ok run says: of a sweep, what it did instead (the runs
    its --resume skipped only where it skipped any, its failed runs where it has some);
    of a file, :func:`none_ok`."""
    if not sweep:
        return none_ok(failed)
    said = ["this sweep measured no run ok"]
    if skipped:
        runs = f"{skipped} {noun_for(skipped, 'run')}"
        said.append(f"{runs} --resume skipped, kept from before, are the file's earlier rows")
    if not failed.empty:
        said.append("its failed runs are said below")
    return "; ".join(said)
