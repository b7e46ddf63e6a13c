"""The "your hardware" section's sentences, each generated from the rows it describes and
saying what it covers: the models measured at a device count (never "every model" where
one was), and the device and backend they ran on where the section mixes several."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from gpuscale.analysis.bench_scaling import break_even_params
from gpuscale.bench.table import flags_counted
from gpuscale.quantities import agreeing, counted, filled, joined, noun_for, number, of_the, span
from gpuscale.report.bench_answer import answering, outlasted
from gpuscale.report.bench_evidence import grade_sentence, tagged

if TYPE_CHECKING:  # its type alone
    from gpuscale.report.bench_checks import ReadRun


def _share_range(shares: pd.Series) -> str:
    """``12%-47%``, or one share when they round alike (never ``47%-47%``)."""
    low, high = f"{shares.min():.0%}", f"{shares.max():.0%}"
    return span(low, high)


def _ratio_range(ratios: pd.Series) -> str:
    """``0.79-0.99x``, or one ratio when they round alike."""
    low, high = number(ratios.min()), number(ratios.max())
    return f"{span(low, high)}x"


# A device name said otherwise in a sentence (a CPU run is processes, not a device).
_DEVICE_WORDS = {"cpu": "CPU processes"}


def _hosts(rows: pd.DataFrame) -> str:
    """``vm: NVIDIA H100 80GB HBM3``: each host by name with the devices it ran on (a
    host's name alone, ``vm``, names no hardware); CPU runs as ``CPU processes``."""
    said = []
    for host, on in rows.groupby(rows["hostname"].astype(str), sort=True):
        names = on.get("device_name", pd.Series(dtype=str)).dropna().astype(str)
        names = sorted({_DEVICE_WORDS.get(n.lower(), n) for n in names})
        said.append(host + filled(": {}", ", ".join(names)))
    return ", ".join(said) or "this machine"


def _devices(count: int) -> str:
    return f"{count} {noun_for(count, 'device')}"


def _listed(names: list[str]) -> str:
    """Up to four names in a sentence; more as their count, first and last."""
    if len(names) <= 4:
        return joined(names)
    return f"{len(names)} ({names[0]} ... {names[-1]})"


def _counts(rows: pd.DataFrame, by: str) -> str:
    """``on 1, 2 devices`` where every configuration ran at every count, else each count
    with what ran there: ``on 1 device (all 6) and 2 devices (mlp-4m only)``."""
    counts = sorted(int(n) for n in rows["accelerators"].unique())
    every = rows[by].nunique()
    at = {
        n: list(dict.fromkeys(rows.loc[rows["accelerators"] == n, "configuration"])) for n in counts
    }
    if all(rows.loc[rows["accelerators"] == n, by].nunique() == every for n in counts):
        return f"on {', '.join(map(str, counts))} device{'s' if counts != [1] else ''}"
    parts = [
        f"{_devices(n)} ({f'all {every}' if len(at[n]) == every else _listed(at[n]) + ' only'})"
        for n in counts
    ]
    return "on " + joined(parts)


def _summary(rows: pd.DataFrame) -> str:
    """What one platform's trusted rows measured: models, sizes, configurations, device
    counts (what ran at each), hosts and backends."""
    models = rows["model"].nunique()
    by = "config_group" if "config_group" in rows else "configuration"
    configurations = rows[by].nunique()  # a configuration run twice is one
    low, high = number(rows["params"].min() / 1e6, 2), number(rows["params"].max() / 1e6)
    sizes = f"of {low}M parameters" if models == 1 else f"from {low}M to {high}M parameters"
    in_configs = f" in {configurations} configurations" if configurations > models else ""
    backends = ", ".join(sorted(rows["backend"].astype(str).unique()))
    return (
        f"{models} {noun_for(models, 'model')} {sizes}{in_configs} "
        f"{_counts(rows, by)} ({_hosts(rows)}, {backends})."
    )


def _at_count(rows: pd.DataFrame, world: int, where: str, used: dict) -> list[str]:
    """The sentences on ``world`` devices of one platform's answering rows (``where``: the
    platform in parentheses where the section has several, else ""; ``used``: the flagged
    runs among them the advice reads, by label, with how it uses them): which of the runs
    measured there train slower or faster than on one device, the break-even size, the
    best speedup; each names the runs it covers, and a flagged one as flagged and used."""
    at = rows[(rows["accelerators"] == world) & rows["speedup"].notna()]
    if at.empty:
        return []
    names = list(at["configuration"])
    noun = "model" if (at["configuration"] == at["model"]).all() else "configuration"
    on = f"{_devices(world)}{where}"
    slower, faster = at[at["speedup"] < 1], at[at["speedup"] >= 1]
    size = break_even_params(rows, world, read=pd.Index(list(used)))
    pace = "slower" if faster.empty else "faster"  # of all the runs, where they agree
    if len(at) == 1:
        text = f"{names[0]}, the only {noun} measured on {on}, trains {pace} than on one device."
    elif size:
        text = (
            f"On {on} the break-even model size is {number(size / 1e6)}M parameters "
            f"(interpolated within a family): of the {len(at)} {noun}s measured there, "
            f"{_listed(list(slower['configuration']))} {agreeing(len(slower), 'trains', 'train')} "
            f"slower than on one device and {_listed(list(faster['configuration']))} faster."
        )
    elif slower.empty or faster.empty:
        text = f"On {on} each of the {len(at)} {noun}s measured there ({_listed(names)}) "
        text += f"trains {pace} than on one device."
    else:
        text = (
            f"On {on} {_listed(list(slower['configuration']))} "
            f"{agreeing(len(slower), 'trains', 'train')} slower than on one device and "
            f"{_listed(list(faster['configuration']))} faster (no crossing within one model "
            "family to interpolate a break-even size)."
        )
    best = at.loc[at["speedup"].idxmax()]
    if len(at) == 1:
        of, step = f"{best['configuration']} on {on}", "its step"
    else:
        of = f"Best scaling on {on}, of the {len(at)} {noun}s measured there: "
        of, step = of + str(best["configuration"]), "the step"
    best_said = (
        f"{of}: {best['speedup']:.2f}x (efficiency {best['efficiency']:.0%}); exposed "
        f"communication is {_share_range(at['comm_fraction'])} of {step}."
    )
    flagged = [at_ for at_ in at.index if at_ in used]
    if flagged:  # a flagged run the advice reads: said so, as the advice's lines say it
        text = text[:-1] + f"; flagged, yet read: {_used(at.loc[flagged], used)}."
    # each said weak where a run it reads (or the N = 1 run a speedup is against) is
    # the break-even size is interpolated from them: derived, a prediction to test
    return [tagged(text, rows, at, derived=bool(size) and len(at) > 1), tagged(best_said, rows, at)]


def _used(rows: pd.DataFrame, used: dict) -> str:
    """``b on 2, the advice rests on it (the only run there)``: each flagged run the
    advice reads, with how it uses it."""
    return "; ".join(
        f"{r.configuration} on {r.accelerators}, {used[at]}"
        for at, r in zip(rows.index, rows.itertuples(), strict=True)
    )


# Each strategy's one-device column and what it costs over the bare module.
_AT_ONE = (
    (
        "ddp_vs_bare",
        "DDP",
        "DDP's synchronised step over the bare one: its own work (synchronised minus no-sync "
        "step) plus the no-sync step's difference from the bare step",
    ),
    ("fsdp_vs_bare", "FSDP", "what FSDP's own per-step work costs"),
)


def _wrapper_at_one(rows: pd.DataFrame, where: str) -> list[str]:
    """What each strategy's wrapper costs on one device (``ddp_vs_bare`` of the N = 1 DDP
    rows, ``fsdp_vs_bare`` of the FSDP ones), the number the table shows in that
    strategy's own column, never as a speedup, and never one strategy's range holding
    the other's number."""
    said = []
    for column, strategy, costs in _AT_ONE:
        ratios = rows.get(column, pd.Series(dtype=float)).dropna()
        if ratios.empty:
            continue
        runs = "the N = 1 run" if len(ratios) == 1 else f"the {len(ratios)} N = 1 runs"
        if (ratios > 1).any():  # a wrapper adds work: above 1 is the timings' noise
            above = "here" if (ratios > 1).all() else f"{(ratios > 1).sum()} of them are"
            costs = f"below 1 by {costs}; above 1, as {above}, by noise alone"
        said.append(
            (
                f"On one device{where} {strategy}'s step reaches {_ratio_range(ratios)} the "
                f"bare module's throughput ({runs}, column '{strategy} vs bare module': "
                f"{costs})",
                rows.loc[ratios.index],
            )
        )
    if not said:
        return []
    last, of_last = said[-1]
    return [
        *(tagged(f"{s}.", rows, of) for s, of in said[:-1]),
        tagged(
            f"{last}; speedups at N > 1 are against the bare module (one device without DDP).",
            rows,
            of_last,
        ),
    ]


def _platforms_summary(platforms: list[tuple[str, pd.DataFrame]]) -> str:
    """The models benched counted over the platforms: ``6 models benched: 5 on NVIDIA H100
    80GB HBM3, nccl and 1 on CPU processes, gloo``, so no platform's count reads as all."""
    models = {m for _, rows in platforms for m in rows["model"].astype(str)}
    parts = joined(f"{rows['model'].nunique()} on {platform}" for platform, rows in platforms)
    return f"{counted(len(models), 'model')} benched: {parts}."


def _kept(all_rows: pd.DataFrame, read: tuple[ReadRun, ...]) -> tuple[pd.DataFrame, ...]:
    """``all_rows`` split as the advice reads them (``bench_answer.answering``): the rows
    that answer, the flagged ones left out, the ones outlasted by a run of more steps of
    their configuration and count."""
    answers, shorter = answering(all_rows, read), outlasted(all_rows)
    flagged = all_rows[all_rows["flagged"].astype(bool) & ~answers & ~shorter]
    return all_rows[answers], flagged, all_rows[shorter]


def _read_flagged(read: tuple[ReadRun, ...]) -> dict:
    """The flagged runs the advice reads, by label, with how it uses each."""
    return {r.at: r.use for r in read if r.flagged and r.read}


def bench_summary(all_rows: pd.DataFrame, read: tuple[ReadRun, ...] = ()) -> list[str]:
    """The findings' first lines: what was benched, per platform (the section's short
    view), or that every run is flagged; the runs it counts are those that answer as the
    advice reads them (``bench_answer.answering``; ``read``: the advice's records of its
    runs, where advised): a flagged run it reads said so, a run outlasted left out."""
    scaling, flagged, shorter = _kept(all_rows, read)
    used = _read_flagged(read)
    if scaling.empty:
        if len(shorter):  # the unflagged ones outlasted by flagged runs of more steps
            return [
                f"No run answers (see the table): {of_the(len(flagged), len(all_rows), 'run')} "
                f"flagged as untrustworthy, and {_runs(shorter)} outlasted by them (of each "
                "configuration and count the advice reads the run of most steps)."
            ]
        every = "The run is" if len(all_rows) == 1 else f"All {len(all_rows)} runs are"
        return [f"{every} flagged as untrustworthy (see the table)."]
    platforms = list(scaling.groupby("platform", sort=False))
    several = len(platforms) > 1
    lines = [_platforms_summary(platforms)] * several
    for platform, rows in platforms:
        on = rows[rows.index.isin(list(used))]
        said = _summary(rows)[:-1]
        if len(on):
            said += f"; flagged, yet read by the advice: {_used(on, used)}"
        said += _left_out(flagged[flagged["platform"] == platform])[:-1]
        lines.append(said + _outlasted(shorter[shorter["platform"] == platform]))
    kept = [p for p, _ in platforms]
    elsewhere = flagged[~flagged["platform"].isin(kept)]
    if len(elsewhere):  # a platform whose every run is flagged
        lines.append(f"Flagged, so left out of these findings: {_runs(elsewhere)}.")
    shorter = shorter[~shorter["platform"].isin(kept)]
    if len(shorter):  # and its unflagged runs outlasted by them
        said = _outlasted(shorter)[2:]
        lines.append(said[0].upper() + said[1:])
    return lines


def _outlasted(rows: pd.DataFrame) -> str:
    """``; outlasted, so left out ...: b on 1 and 2.`` (``.`` where none is)."""
    if rows.empty:
        return "."
    return (
        "; outlasted, so left out of these findings (of each configuration and count the "
        f"advice reads the run of most steps): {_runs(rows)}."
    )


def _runs(rows: pd.DataFrame) -> str:
    """``b on 2, c on 4``: each run by its configuration and device count."""
    return joined(f"{r.configuration} on {r.accelerators}" for r in rows.itertuples())


def _left_out(flagged: pd.DataFrame) -> str:
    """What a summary leaves out of the runs it counts: ``; flagged, so left out of
    these findings: b on 2.`` (``.`` where none is)."""
    return f"; flagged, so left out of these findings: {_runs(flagged)}." if len(flagged) else "."


def bench_findings(all_rows: pd.DataFrame, read: tuple[ReadRun, ...] = ()) -> list[str]:
    """Sentences: what was measured, DDP's cost on one device, break-even size, best and
    worst scaling, communication share; from the runs that answer as the advice reads
    them (``bench_answer.answering``: the flagged ones named and left out unless the
    advice reads them, ``read``; a run outlasted by one of more steps left out), per
    device and backend (``platform``) where the rows ran on several, each sentence naming
    its platform then."""
    scaling, flagged, _ = _kept(all_rows, read)
    out = bench_summary(all_rows, read)
    if scaling.empty:
        return out
    platforms = list(scaling.groupby("platform", sort=False))
    several = len(platforms) > 1
    # the bench table's evidence grade of the unflagged runs, as the CLI says it (a
    # flagged run read is said flagged where a finding reads it)
    grade = grade_sentence(scaling[~scaling["flagged"].astype(bool)], all_rows)
    if grade:
        out.append(grade)
    if len(flagged):
        names = _runs(flagged)
        # each kind of flag once, with its count (the table gives each run's own words)
        kinds = flags_counted(flagged)
        out.append(
            f"Left out of these findings as not trustworthy: {names}; why: {kinds}, each "
            "run's own reason in the table; the advice leaves them out too unless it says it "
            "used them."
        )
    used = _read_flagged(read)
    for platform, rows in platforms:
        where = f" ({platform})" if several else ""
        out += _wrapper_at_one(rows, where)
        for world in sorted(set(rows["accelerators"]) - {1}):
            out += _at_count(rows, int(world), where, used)
    return out
