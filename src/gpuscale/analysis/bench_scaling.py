"""Scaling of the user's own bench runs: speedup and efficiency per model, break-even size.

For each model and configuration group (the same run at every device count: same
threads per rank, batch, precision, backend, ...), against the group's one-device run
(of the same sweep where the file holds several, see ``tables.bench.one_device``):
``speedup = samples_per_s(N) / samples_per_s(1)`` (throughput, so weak and strong
scaling read the same way) and ``efficiency = speedup / N``. The one-device throughput is
the **plain** step's (the bare module, no DDP wrapper: what a user pays on one device)
where the run timed it, else the DDP step's (``baseline`` says which);
``speedup_ddp`` is always against DDP's one-rank step, which carries DDP's own overhead
and so flatters N > 1 (an FSDP group's against FSDP's, in ``speedup_fsdp``). At N = 1
``speedup`` and ``efficiency`` are NaN (a run on one device
has no speedup over one device): what that row measures against the bare module is
``ddp_vs_bare``, DDP's one-rank throughput over the bare module's (below 1: what DDP's
wrapper costs on one device; NaN at N > 1 and where no plain step was timed), or for an
FSDP run ``fsdp_vs_bare``, FSDP's (``ddp_vs_bare`` NaN there: no DDP wrapper ran). ``platform``
says what each run ran on (device and backend). A run without a one-device run of the
same configuration gets no speedup (it is never compared with another configuration) and
a flag saying so. An
efficiency that cannot be true (super-linear, see ``gpuscale.plausibility``) flags the
row, as does a flagged N = 1 run every row read against it (flagged in the bench table:
a speedup is only as trustworthy as both of its runs). The **break-even model size** at
N is where the speedup crosses 1: log-linear interpolation in parameters between the
largest model slower than one device and the next larger model that is not, over
unflagged rows.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from gpuscale.plausibility import FlagKind, flag_kinds, superlinear_flag
from gpuscale.quantities import counted, filled, format_count, joined, noun_for, of_the
from gpuscale.tables import BenchStatus
from gpuscale.tables.bench import configuration_labels, one_device
from gpuscale.tables.commands import suggested_command
from gpuscale.tables.measures import efficiency, rate_speedup

NO_BASELINE = f"{FlagKind.NO_BASELINE}: no speedup"


def bench_scaling(table: pd.DataFrame) -> pd.DataFrame:
    """The ``ok`` rows of a bench table with ``speedup`` and ``efficiency`` (against the
    plain one-device step where measured; NaN at N = 1), ``speedup_ddp`` and ``baseline``
    columns (NaN where the group has no one-device run), ``ddp_vs_bare`` (N = 1 DDP rows),
    ``fsdp_vs_bare`` (N = 1 FSDP rows) and
    ``platform``, flags updated, sorted by model size, configuration (numbers in it read as
    numbers) and device count."""
    ok = table[table["status"] == BenchStatus.OK].copy()
    if ok.empty:
        return ok.assign(
            speedup=pd.Series(dtype=float),
            efficiency=pd.Series(dtype=float),
            speedup_ddp=pd.Series(dtype=float),
            speedup_fsdp=pd.Series(dtype=float),
            ddp_vs_bare=pd.Series(dtype=float),
            fsdp_vs_bare=pd.Series(dtype=float),
            platform=pd.Series(dtype=str),
            baseline=pd.Series(dtype=str),
            configuration=pd.Series(dtype=str),
        )
    samples = ok["batch_per_device"].astype(float) * ok["accum"].astype(float)
    ok["plain_samples_per_s"] = samples / (ok["plain_step_ms_mean"].astype(float) / 1e3)
    ddp = one_device(ok, "samples_per_s")
    plain = one_device(ok, "plain_samples_per_s")
    ok = ok.drop(columns="plain_samples_per_s")
    base = plain.where(plain > 0, ddp)
    multi = ok["accelerators"] > 1  # at N = 1 a "speedup" over one device is no speedup
    ok["speedup"] = rate_speedup(ok["samples_per_s"], base).where(multi)
    ok["efficiency"] = efficiency(ok["speedup"], ok["accelerators"])
    # against the wrapped N = 1 step, and what the wrapper costs on one device (its
    # one-rank throughput over the bare module's), each in the column of the strategy the
    # row ran (an FSDP run's is no DDP wrapper's)
    fsdp = ok["strategy"] == "fsdp"
    wrapped_speedup = rate_speedup(ok["samples_per_s"], ddp)
    ok["speedup_ddp"] = wrapped_speedup.where(~fsdp)
    ok["speedup_fsdp"] = wrapped_speedup.where(fsdp)
    vs_bare = rate_speedup(ok["samples_per_s"], plain.where(plain > 0)).where(~multi)
    ok["ddp_vs_bare"] = vs_bare.where(~fsdp)
    ok["fsdp_vs_bare"] = vs_bare.where(fsdp)
    ok["platform"] = platform_labels(ok)
    # the wrapped step of the strategy the group ran (an FSDP group's is FSDP's, no DDP's)
    wrapped = np.where(fsdp, "FSDP N = 1", "DDP N = 1")
    ok["baseline"] = np.where(plain > 0, "plain N = 1 step", np.where(ddp > 0, wrapped, ""))
    # at N = 1 the bench table flagged DDP's one-rank step against the plain step, and
    # each N > 1 row whose N = 1 run is flagged (bench.baselines)
    extra = [
        _efficiency_flag(e, n, b)
        for e, n, b in zip(ok["efficiency"], ok["accelerators"], base, strict=True)
    ]
    ok["flags"] = ["; ".join(filter(None, [f, x])) for f, x in zip(ok["flags"], extra, strict=True)]
    ok["flag_kinds"] = ok["flags"].map(flag_kinds)
    ok["flagged"] = ok["flags"].str.len() > 0
    ok["configuration"] = configuration_labels(ok)  # two precisions of a model: two labels
    # numbers in labels read as numbers: batch 1, 8, 64, 256 (not 1, 256, 64, 8)
    order = {label: k for k, label in enumerate(sorted(set(ok["configuration"]), key=_natural))}
    ok["_order"] = ok["configuration"].map(order)
    ordered = ok.sort_values(["params", "_order", "accelerators"], kind="stable")
    return ordered.drop(columns="_order").reset_index(drop=True)


def _efficiency_flag(efficiency: float, accelerators: int, baseline: float) -> str | None:
    """The flag a run's efficiency earns past the bench table's own: no baseline to
    measure it against, or (N > 1) one that cannot be true."""
    if pd.isna(baseline):
        return NO_BASELINE
    if accelerators > 1:
        return superlinear_flag(efficiency, int(accelerators))
    return None


def _natural(label: str) -> list[tuple[int, float, str]]:
    """A sort key reading the runs of digits of ``label`` as numbers."""
    return [
        (0, float(part), "") if part.isdigit() else (1, 0.0, part)
        for part in re.split(r"(\d+)", label)
        if part
    ]


def platform_labels(frame: pd.DataFrame) -> pd.Series:
    """What each run ran on, device and backend: ``NVIDIA H100 80GB HBM3, nccl``, or
    ``CPU processes, gloo`` (a CPU run's processes are its "devices")."""
    names = frame.get("device_name", pd.Series(None, frame.index, dtype=object))
    cpu = frame["device"].astype(str).str.lower().eq("cpu")
    named = names.where(names.notna() & (names.astype(str) != ""), frame["device"]).astype(str)
    return named.where(~cpu, "CPU processes") + ", " + frame["backend"].astype(str)


def trusted(scaling: pd.DataFrame) -> pd.DataFrame:
    """The rows without flags: what advice and findings may use."""
    return scaling[~scaling["flagged"].astype(bool)]


def break_even_params(
    scaling: pd.DataFrame, accelerators: int = 2, speedup: float = 1.0
) -> float | None:
    """Parameters at which the speedup on ``accelerators`` devices reaches ``speedup``.

    None when no model crosses it (all faster, all slower, or no such runs). With several
    families the smallest crossing is returned. Flagged rows are left out.
    """
    rows = trusted(scaling)
    rows = rows[rows["accelerators"] == accelerators].dropna(subset=["speedup"])
    crossings = []
    for _, family in rows.groupby("family"):
        ordered = family.sort_values("params")
        params = ordered["params"].to_numpy(float)
        values = ordered["speedup"].to_numpy(float)
        for i in range(1, len(params)):
            if values[i - 1] < speedup <= values[i]:
                fraction = (speedup - values[i - 1]) / (values[i] - values[i - 1])
                log_p = math.log10(params[i - 1]) + fraction * (
                    math.log10(params[i]) - math.log10(params[i - 1])
                )
                crossings.append(float(10**log_p))
                break
    return min(crossings, default=None)


def break_even_sentence(scaling: pd.DataFrame, accelerators: int) -> str:
    """What the runs say about the break-even on ``accelerators`` devices, from the rows
    :func:`break_even_params` uses (unflagged, with a speedup) and never from the rows it
    leaves out: the size, that no model crossed, or that no trusted row was there; weak
    evidence (``bench.evidence``) said."""
    at = scaling[scaling["accelerators"] == accelerators]
    rows = trusted(at).dropna(subset=["speedup"])
    head = f"break-even on {accelerators} devices"
    if rows.empty:
        left = len(at) - len(rows)
        return f"{head}: not stated, no trusted run there ({left} flagged or without a speedup)"
    size = break_even_params(scaling, accelerators)
    text = f"{format_count(size)} parameters" if size else "not crossed by the models run"
    weak = int((rows.get("evidence", pd.Series(dtype=str)) == "weak").sum())
    if weak:
        text += f" (weak evidence: {of_the(weak, len(rows), 'run')})"  # why: --explain
    return f"{head}: {text}"


def bench_headline(scaling: pd.DataFrame) -> tuple[str, ...]:
    """The answer of a bench table, said first: the break-even on each device count run
    past one (:func:`break_even_sentence`), or where every run is on one device that
    there is no speedup yet and what measures one; none without a run."""
    worlds = sorted(set(scaling["accelerators"]) - {1})
    if worlds:
        return tuple(break_even_sentence(scaling, int(w)) for w in worlds)
    if scaling.empty:
        return ()
    return (
        f"break-even: not stated, {counted(len(scaling), 'run')} on 1 device only (no "
        "speedup yet); bench --nproc 1,2 measures one",
    )


def baseline_sentence(scaling: pd.DataFrame) -> str | None:
    """On CPU, what the N = 1 baseline is and what a speedup over it does not answer: only
    where a CPU run at N > 1 has a speedup (an N = 1 run of its configuration to compare
    with; None otherwise), with its threads (the N = 1 run's: the same configuration),
    and the processes (and machines) of the largest such run."""
    cpu = scaling[scaling["device"] == "cpu"]
    multi = cpu[(cpu["accelerators"] > 1) & cpu["speedup"].notna()]
    if multi.empty:
        return None
    counts = [int(t) for t in sorted(multi["threads"].dropna().unique())]
    threads = f"{joined(counts, 'or')} {noun_for(max(counts, default=0), 'thread')}"
    largest = multi.loc[multi["accelerators"].idxmax()]
    processes = f"{int(largest['accelerators'])} processes"
    whether = f"{processes} beat this machine"
    if largest["nnodes"] > 1:  # NaN: one machine
        whether = f"{processes} on {int(largest['nnodes'])} machines beat one machine"
    # one process alone takes every core of the host by default (threads = cores / ranks)
    measures = suggested_command(
        "bench", "--backend", "gloo", "--nproc", 1, "--model", largest["model"]
    )
    return (
        f"CPU baseline: the N = 1 run is one process with {threads}, as many as "
        f"each process of the N > 1 runs had; a speedup over it does not answer whether "
        f"{whether} used by one process with all its cores: {measures} measures that one"
    )


def bench_document(table: pd.DataFrame) -> dict[str, Any]:
    """A bench table's scaling, failed runs and break-even sizes as one document (the
    ``bench`` part of ``analyze -f json``)."""
    scaling = bench_scaling(table)
    worlds = sorted(set(scaling["accelerators"]) - {1})
    failed = table[table["status"] != "ok"][["model", "accelerators", "status", "error"]]
    return {
        "source": "bench",
        "runs": scaling.to_dict("records"),
        "failed": failed.to_dict("records"),
        "break_even_params": {str(w): break_even_params(scaling, w) for w in worlds},
        "break_even": {str(w): break_even_sentence(scaling, w) for w in worlds},
        "baseline": baseline_sentence(scaling),
    }


# What each speedup column of a bench table is against, said below it (``speedup_basis``:
# the clauses of the columns shown, each naming its column as shown). ``{c}``: the shown
# name of column ``c``.
BASIS_CLAUSES = {
    "speedup": "{speedup} and {efficiency} (N > 1 only): against the plain N = 1 step (the "
    "bare module, what one device costs) where timed, else the N = 1 step of the strategy "
    "the run used",
    "speedup_ddp": "{speedup_ddp}: against DDP's N = 1 step (it carries DDP's own overhead)",
    "ddp_vs_bare": "{ddp_vs_bare} (N = 1 only): DDP's one-device throughput over the bare "
    "module's, below 1 by what DDP's wrapper costs, above 1 by noise alone (the wrapper "
    "adds work to a step, never removes it)",
    "speedup_fsdp": "{speedup_fsdp}: against FSDP's N = 1 step (it carries FSDP's own work)",
    "fsdp_overhead_ms": "{fsdp_overhead_ms}: FSDP's own work per step, the larger of its "
    "synchronised minus no-sync step and its step less the plain one, at least 0 (an FSDP "
    "run's plain step is the sharded module)",
    "fsdp_vs_bare": "{fsdp_vs_bare} (N = 1 only): FSDP's one-device throughput over the "
    "plain step's, below 1 by what FSDP's own work costs",
}


def terminal_label(column: str) -> str:
    """A column's name as a terminal table heads it (``cli.output``: ``speedup ddp``)."""
    return column.replace("_", " ")


def speedup_basis(columns: Sequence[str], label: Callable[[str], str] = terminal_label) -> str:
    """What the speedup columns among ``columns`` (those a table shows) are against, each
    named by ``label`` as the table heads it; empty where it shows none of them."""
    names = {c: label(c) for c in (*columns, "efficiency")}
    return "; ".join(
        clause.format_map(names) for column, clause in BASIS_CLAUSES.items() if column in columns
    )


def _ran_columns(scaling: pd.DataFrame) -> tuple[str, ...]:
    """The speedup columns of the strategies ``scaling``'s rows ran (DDP where it names
    none), as the terminal shows them (``bench_view.shown_columns``)."""
    ran = set(scaling.get("strategy", pd.Series(dtype=str)).dropna()) or {"ddp"}
    strategies = {"ddp", "fsdp"}
    return tuple(
        c for c in BASIS_CLAUSES if not (set(c.split("_")) & strategies) or set(c.split("_")) & ran
    )


def bench_notes(
    scaling: pd.DataFrame, failed: pd.DataFrame, columns: Sequence[str] | None = None
) -> list[str]:
    """The lines below a bench table (each run by its table label: ``m (run 2)`` where
    a model ran twice): what speedups are against, flagged rows' reasons,
    failed runs, weak evidence, peaks unknown and what the CPU baseline is (the break-even
    sizes are said above the table: :func:`bench_headline`). ``columns``: those the table
    shows (default: each strategy's that a row ran), the only ones the first line explains."""
    if scaling.empty:
        return trouble_lines(scaling, failed)
    basis = speedup_basis(_ran_columns(scaling) if columns is None else columns)
    weak = scaling[~scaling["flagged"] & (scaling["evidence"] == "weak")]
    lines = [
        basis,
        *trouble_lines(scaling, failed),
        *(
            f"weak evidence {r.configuration} on {r.accelerators}: {r.evidence_notes}"
            for r in weak.itertuples()
        ),
        *_no_peak(scaling),  # the break-even sizes are the headline (bench_headline)
        baseline_sentence(scaling),
    ]
    return [line for line in lines if line]  # no basis or baseline where none is said


def trouble_lines(scaling: pd.DataFrame, failed: pd.DataFrame) -> list[str]:
    """A line per flagged run (a number not to use) and per failed run (why it failed;
    where the file also holds an ok run of that model on that count, said: a failed
    attempt the user mended and ran again is no trouble left)."""
    flagged = [
        f"flagged {r.configuration} on {r.accelerators}: {r.flags}"
        for r in scaling[scaling["flagged"]].itertuples(index=False)
    ]
    mended = dict.fromkeys(
        zip(scaling["model"], scaling["accelerators"], strict=True),
        " (an ok run of it there is in the file too)",
    )
    return flagged + [
        f"{r.status} {r.model} on {r.accelerators}: {r.error}"
        + mended.get((r.model, r.accelerators), "")
        for r in failed.itertuples(index=False)
    ]


def _no_peak(scaling: pd.DataFrame) -> list[str]:
    """One line per GPU whose runs have no MFU because the device catalogue records no
    peak for it (an A10G, a TPU): the blank column said, not left to read as unmeasured."""
    if scaling.empty or "peak_tflops" not in scaling:
        return []
    gpu = scaling[(scaling["device"] == "cuda") & scaling["peak_tflops"].isna()]
    return [
        f"no MFU on {name}: gpuscale records no peak FLOP/s for it (the device catalogue), "
        "so the achieved TFLOP/s per device are said without a share of a peak"
        for name in dict.fromkeys(gpu["device_name"].dropna().astype(str))
    ]


def earlier_rows(scaling: pd.DataFrame, failed: pd.DataFrame, path: object) -> str | None:
    """One line counting a results file's rows of earlier sweeps (None without any): the
    runs that measured (``ok``), how many of those are flagged, and the failed ones."""
    rows = len(scaling) + len(failed)
    if not rows:
        return None
    flagged = int(scaling["flagged"].sum())
    ok = f"{len(scaling)} ok" + (filled(", {} of them flagged;", flagged) or ",")
    return (
        f"earlier runs: {path} also holds {rows} {noun_for(rows, 'row')} of earlier "
        f"sweeps ({ok} {len(failed)} failed), not summarised here: "
        f"{suggested_command('analyze', '--bench', str(path))} reads them all"
    )
