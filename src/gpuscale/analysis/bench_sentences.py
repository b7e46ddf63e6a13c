"""The sentences of a bench table (``bench_scaling``'s): the break-even sizes first
(``bench_headline``), what each speedup column is against (``speedup_basis``), the lines
below the table (flagged, failed and weak runs, a wrapper's one-rank baseline, peaks
unknown, the CPU baseline: ``bench_notes``), and the ``bench`` document of ``analyze -f
json`` that carries both the numbers and these sentences."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence

import pandas as pd

from gpuscale.analysis.bench_scaling import bench_scaling, break_even_params, trusted
from gpuscale.plausibility import FlagKind
from gpuscale.quantities import (
    column_label,
    counted,
    filled,
    format_count,
    joined,
    noun_for,
    number,
    of_the,
)
from gpuscale.tables.bench_runs import bench_options
from gpuscale.tables.commands import quoted_path, suggested_command


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
        runs = f"{of_the(weak, len(rows), 'run')} on {accelerators} devices"  # why: --explain
        text += f" (weak evidence: {runs})"
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


def broken_models(scaling: pd.DataFrame) -> set[str]:
    """The models of ``scaling`` with a run whose loss was not finite (a broken or
    diverged model: the advice uses none of its runs, and no note is said of it)."""
    kinds = scaling.get("flag_kinds", pd.Series([()] * len(scaling), index=scaling.index))
    lost = kinds.map(lambda found: FlagKind.LOSS in (found or ()))
    return set(scaling.loc[lost.astype(bool), "model"].astype(str))


def _measures_one(multi: pd.DataFrame) -> str:
    """The ``gpuscale bench ... --nproc 1`` commands that run one process with all its
    cores in each compared configuration (its largest run's, less its threads: one process
    alone takes every core of the host by default), the models sharing one named together
    (``--models a,b``; a model file, ``--model``, alone)."""
    largest = multi.sort_values("accelerators").groupby("model", sort=False).tail(1)
    groups: dict[str, list[str]] = {}
    for _, row in largest.sort_values("accelerators", ascending=False).iterrows():
        kept = row.drop("threads")
        alone = ":" in str(row["model"])  # a file: --model takes one
        key = bench_options(kept) if alone else bench_options(kept, model=False)
        groups.setdefault(key, []).append("" if alone else str(row["model"]))
    commands = [
        "`gpuscale bench "
        + filled("--models {} ", ",".join(shlex.quote(m) for m in models if m))
        + f"{options} --nproc 1`"
        for options, models in groups.items()
    ]
    return f"{joined(commands, 'and')} {'measures' if len(commands) == 1 else 'measure'}"


def baseline_sentence(scaling: pd.DataFrame) -> str | None:
    """On CPU, what the N = 1 baseline is and what a speedup over it does not answer: only
    where a CPU run at N > 1 has a speedup (an N = 1 run of its configuration to compare
    with; None otherwise), with its threads (the N = 1 run's: the same configuration),
    the processes (and machines) of the largest such run, and the one-process run of each
    model compared (:func:`_measures_one`); a broken model's runs are no such run
    (:func:`broken_models`)."""
    cpu = scaling[(scaling["device"] == "cpu") & ~scaling["model"].isin(broken_models(scaling))]
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
    return (
        f"CPU baseline: the N = 1 run is one process with {threads}, as many as "
        "each process of the N > 1 runs had; a speedup over it does not answer whether "
        f"{whether} used by one process with all its cores: {_measures_one(multi)} that one"
    )


def bench_document(table: pd.DataFrame) -> dict[str, object]:
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
    "module's, the bare step over DDP's synchronised one: below 1 by DDP's own work "
    "(synchronised minus no-sync step) plus the no-sync step's difference from the bare one, "
    "above 1 by noise alone (the wrapper adds work to a step, never removes it)",
    "speedup_fsdp": "{speedup_fsdp}: against FSDP's N = 1 step (it carries FSDP's own work)",
    "fsdp_overhead_ms": "{fsdp_overhead_ms}: FSDP's own work per step, the larger of its "
    "synchronised minus no-sync step and its step less the plain one, at least 0 (an FSDP "
    "run's plain step is the sharded module)",
    "fsdp_vs_bare": "{fsdp_vs_bare} (N = 1 only): FSDP's one-device throughput over the "
    "plain step's, below 1 by what FSDP's own work costs",
}


# What a speedup set against the advice's prediction is over, by its basis
# (``bench_scaling.SPEEDUP_BASES``): the one-device step the prediction models.
BASIS_WORDS = {
    "nosync": "over the no-sync N = 1 step",  # DDP's step less its own work
    "ddp": "over DDP's N = 1 step",  # where no DDP work of its own is recorded
    "bare": "over the bare module's N = 1 step",
    "fsdp": "over FSDP's N = 1 step",  # where no faster bare module was timed
}


def speedup_over(*bases: str) -> str:
    """What a speedup is over, in words, by its ``bases`` (``SPEEDUP_BASES`` ids; runs of
    two benches, ``nosync`` and ``bare``: each said, "; "-joined)."""
    return "; ".join(BASIS_WORDS.get(b, f"over the N = 1 step ({b})") for b in bases)


def terminal_label(column: str) -> str:
    """A column's name as a terminal table heads it (``cli.output``: ``speedup ddp``)."""
    return column_label(column)


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
        *wrapped_baselines(scaling),
        *trouble_lines(scaling, failed),
        *(
            f"weak evidence {r.configuration} on {r.accelerators}: {r.evidence_notes}"
            for r in weak.itertuples()
        ),
        *_no_peak(scaling),  # the break-even sizes are the headline (bench_headline)
        baseline_sentence(scaling),
    ]
    return [line for line in lines if line]  # no basis or baseline where none is said


def wrapped_baselines(scaling: pd.DataFrame) -> list[str]:
    """A line per N = 1 run whose configuration's speedups are against the wrapper's
    one-rank step (no bare step timed faster: ``baseline`` ``DDP N = 1`` or ``FSDP N = 1``)
    with the wrapper's own work measured in it: how much, and by up to what factor the
    speedups against it overstate those over one device without the wrapper (that step
    over the step less its own work)."""
    if scaling.empty:
        return []
    one = scaling[(scaling["accelerators"] == 1) & scaling["baseline"].str.endswith(" N = 1")]
    lines = []
    for r in one.itertuples(index=False):
        wrapper = "FSDP" if r.strategy == "fsdp" else "DDP"
        own = r.fsdp_overhead_ms if wrapper == "FSDP" else r.ddp_overhead_ms
        step = float(r.step_ms_mean)
        if not (pd.notna(own) and 0 < own < step):
            continue
        lines.append(
            f"baseline {r.configuration}: {wrapper}'s N = 1 step ({number(step)} ms), no bare "
            f"step timed faster; it holds {wrapper}'s own work ({number(float(own))} ms), so "
            f"speedups against it overstate those over one device without {wrapper} by up to "
            f"{number(step / (step - float(own)))}x"
        )
    return lines


def trouble_lines(scaling: pd.DataFrame, failed: pd.DataFrame) -> list[str]:
    """A line per flagged run (a number not to use), per run whose energy is flagged
    (``energy_flag``: its power meter dropped out) and per failed run (why it failed;
    where the file also holds an ok run of that model on that count, said: a failed
    attempt the user mended and ran again is no trouble left)."""
    flagged = [
        f"flagged {r.configuration} on {r.accelerators}: {r.flags}"
        for r in scaling[scaling["flagged"]].itertuples(index=False)
    ]
    # a run whose power meter dropped out: its times stand, its energy is not used
    metered = scaling.get("energy_flag", pd.Series("", index=scaling.index)).fillna("")
    flagged += [
        f"energy not used {r.configuration} on {r.accelerators}: {why}"
        for r, why in zip(scaling.itertuples(index=False), metered, strict=True)
        if why
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
    file = "FILE" if path is None else str(path)  # None: a table given, read from no file
    return (
        f"earlier runs: {quoted_path(file)} also holds {rows} {noun_for(rows, 'row')} of earlier "
        f"sweeps ({ok} {len(failed)} failed), not summarised here: "
        f"{suggested_command('analyze', '--bench', file)} reads them all"
    )
