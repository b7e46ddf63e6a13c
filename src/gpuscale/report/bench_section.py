"""The report's "your hardware" section, from ``gpuscale bench`` results."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from gpuscale.advice.intervals import as_throughput
from gpuscale.analysis.bench_scaling import (
    SPEEDUP_BASIS,
    bench_scaling,
    break_even_params,
    trusted,
)
from gpuscale.quantities import number
from gpuscale.report.bench_advice import BenchAdvice
from gpuscale.report.bench_figures import predicted_scaling, speedup_by_size, step_breakdown
from gpuscale.report.figures_common import NothingToDraw
from gpuscale.report.svg import FigureFiles
from gpuscale.tables.bench import most_host_devices, on_a_larger_host

COLUMNS = {
    "configuration": "Model",  # with its configuration where the file holds several
    "params": "Parameters",
    "accelerators": "Devices",
    "step_ms_mean": "Step (ms)",
    "samples_per_s": "Samples/s",
    "exposed_comm_ms": "Exposed comm. (ms)",
    "sync_wait_ms": "Sync wait (ms)",
    "comm_fraction": "Comm. share",
    "speedup": "Speedup",
    "efficiency": "Efficiency",
    "flags": "Not trusted because",
}


@dataclass(frozen=True, slots=True)
class BenchSection:
    findings: list[str]
    figures: list[tuple[str, str, list[str]]]  # (title, inline svg, file names)
    columns: list[str]
    rows: list[dict[str, str]]
    failed: list[str] = field(default_factory=list)  # runs that did not measure, one line each
    answer: list[str] = field(default_factory=list)  # for the top of the report
    advice_refused: str | None = None  # why the advice asked for was not given
    speedup_basis: str = SPEEDUP_BASIS  # what the speedups are against: the CLI's words


def failed_runs(table: pd.DataFrame) -> list[str]:
    """One line per run that did not measure: model, devices, status, the error's first
    line (user text: the report escapes it)."""
    lines = []
    for r in table[table["status"] != "ok"].to_dict("records"):
        error = str(r.get("error") or "").strip().splitlines()
        lines.append(
            f"{r['model']} on {r['accelerators']} device(s): {r['status']}"
            + (f": {error[0]}" if error else "")
        )
    return lines


def _share_range(shares: pd.Series) -> str:
    """``12%-47%``, or one share when they round alike (never ``47%-47%``)."""
    low, high = f"{shares.min():.0%}", f"{shares.max():.0%}"
    return low if low == high else f"{low}-{high}"


def _hosts(rows: pd.DataFrame) -> str:
    """``vm: NVIDIA H100 80GB HBM3``: each host by name with the devices it ran on (a
    host's name alone, ``vm``, named no hardware: a user walk)."""
    said = []
    for host, on in rows.groupby(rows["hostname"].astype(str), sort=True):
        names = sorted({str(n) for n in on.get("device_name", pd.Series(dtype=str)).dropna()})
        said.append(f"{host}: {', '.join(names)}" if names else host)
    return ", ".join(said) or "this machine"


def bench_findings(all_rows: pd.DataFrame) -> list[str]:
    """Sentences: break-even size, best and worst scaling, communication share; from the
    runs without plausibility flags (the flagged ones are named and left out)."""
    out = []
    scaling = trusted(all_rows)
    flagged = all_rows[all_rows["flagged"].astype(bool)]
    if scaling.empty:
        every = "The run is" if len(all_rows) == 1 else f"All {len(all_rows)} runs are"
        return [f"{every} flagged as untrustworthy (see the table)."]
    hosts = _hosts(scaling)
    models, counts = scaling["model"].nunique(), sorted(scaling["accelerators"].unique())
    # a configuration run twice is one configuration (its labels say "run 2")
    by = "config_group" if "config_group" in scaling else "configuration"
    configurations = scaling[by].nunique()
    low, high = number(scaling["params"].min() / 1e6, 2), number(scaling["params"].max() / 1e6)
    sizes = f"of {low}M parameters" if models == 1 else f"from {low}M to {high}M parameters"
    in_configs = f" in {configurations} configurations" if configurations > models else ""
    out.append(
        f"{models} model{'s' if models != 1 else ''} {sizes}{in_configs} on "
        f"{', '.join(map(str, counts))} device{'s' if counts != [1] else ''} "
        f"({hosts}, {', '.join(sorted(scaling['backend'].unique()))})."
    )
    if len(flagged):
        names = ", ".join(f"{r.configuration} on {r.accelerators}" for r in flagged.itertuples())
        out.append(
            f"Left out of these findings as not trustworthy: {names} (reasons in the "
            "table); the advice leaves them out too unless it says it used them."
        )
    for world in sorted(set(scaling["accelerators"]) - {1}):
        at = scaling[(scaling["accelerators"] == world) & scaling["speedup"].notna()]
        if at.empty:
            continue
        size = break_even_params(scaling, world)
        slower = at[at["speedup"] < 1]
        if size:
            text = (
                f"On {world} devices the break-even model size is {number(size / 1e6)}M "
                "parameters: smaller models train slower than on one device."
            )
        elif len(slower) == len(at):
            text = f"On {world} devices every model trains slower than on one device."
        elif slower.empty:
            text = f"On {world} devices every model trains faster than on one device."
        else:
            text = (
                f"On {world} devices {', '.join(slower['configuration'])} train slower than on "
                f"one device and {', '.join(at[at['speedup'] >= 1]['configuration'])} faster "
                "(no crossing within one model family to interpolate a break-even size)."
            )
        out.append(text)
        best = at.loc[at["speedup"].idxmax()]
        out.append(
            f"Best scaling on {world}: {best['configuration']} at {best['speedup']:.2f}x "
            f"(efficiency {best['efficiency']:.0%}); exposed communication is "
            f"{_share_range(at['comm_fraction'])} of the step."
        )
    return out


def against_measured(
    predicted: pd.DataFrame, measured: pd.DataFrame, runs: pd.Series, *, allowed: bool = False
) -> list[str]:
    """One sentence per measured run (``runs``: their labels) at N > 1 of the advised
    model: its throughput speedup and whether it lies in the advice's 80% interval at that
    N (``predicted``: ``advice.intervals.as_throughput``'s columns); flagged runs are said so
    (``allowed``: the advice used them, ``--allow-flagged``)."""
    by_n = predicted.set_index("accelerators")
    lines = []
    for run, r in zip(runs, measured.to_dict("records"), strict=True):
        n = int(r["accelerators"])
        if n == 1 or n not in by_n.index or pd.isna(r["speedup"]):
            continue
        low, high = float(by_n.at[n, "speedup_low"]), float(by_n.at[n, "speedup_high"])
        use = "used by the advice (--allow-flagged)" if allowed else "left out of the advice"
        weak = ", weak evidence" if r.get("evidence") == "weak" else ""
        state = f"flagged, {use}: {r['flags']}" if r["flagged"] else f"trusted{weak}"
        inside = low <= r["speedup"] <= high
        lines.append(
            f"Measured {run} on {n} devices: {r['speedup']:.2f}x ({state}), "
            + (
                f"inside the advice's 80% throughput interval ({number(low)}-{number(high)}x; "
                "a measured step has no convergence factor)."
                if inside
                else f"OUTSIDE the advice's 80% throughput interval ({number(low)}-"
                f"{number(high)}x): "
                "the advice does not match this measurement"
                + ("; re-measure (more --steps, a quieter machine)." if r["flagged"] else ".")
            )
        )
    return lines


def advice_figure(
    scaling: pd.DataFrame, out: FigureFiles, given: BenchAdvice
) -> tuple[list[str], tuple | None, list[str], str | None]:
    """The advice computed for the bench (``gpuscale advise --bench``): its explanation,
    the predicted scaling against the measured points, the lines for the top of the
    report (the advice's decision, each measured N > 1 against it), and why no advice was
    given (None when it was: what ``gpuscale advise --bench`` says)."""
    result = given.advice
    if result is None:
        return [f"No advice: {given.refused}"], None, [f"No advice: {given.refused}"], given.refused
    inputs = result.inputs
    assert inputs is not None
    predicted = as_throughput(result.predictions)
    model = inputs.name
    of_model = scaling["model"] == model
    measured = scaling[of_model]
    allowed = given.allow_flagged
    checks = against_measured(predicted, measured, measured["configuration"], allowed=allowed)
    title = f"Advice: {model} on {inputs.network.name}"
    svg, files = out.save(
        lambda: predicted_scaling(predicted, measured, title),
        "advice_predicted_scaling",
        predicted,
        measured,
        title,
    )
    # The decision, not the warning before it (said in the section; named here), then
    # what qualifies it (``Advice.caveats``, first in the explanation).
    caveats = list(result.caveats)
    said = [
        line
        for line in result.explanation
        if not line.startswith("WARNING") and line not in caveats
    ]
    # said only where the advised model's own runs were flagged and so used: --allow-flagged
    # given over clean runs (or beside a broken model, never used) used nothing flagged
    used = allowed and bool(measured["flagged"].fillna(False).astype(bool).any())
    warned = " (from flagged runs, --allow-flagged: less certain)" if used else ""
    decision = [f"Advice for {model}{warned}: {said[0]}"] if said else []
    decision += [f"Advice for {model}: {line}" for line in caveats]
    explained = [f"Advice for {model}: {line}" for line in result.explanation]
    if any(re.search(r"(?<![\w-])--[a-z]", line) for line in result.explanation):
        # the advice names `advise`'s options (--samples, --collectives...): not the report's
        explained.append(
            f"Advice for {model}: the options it names are `gpuscale advise`'s (the report "
            "takes only --interconnect, --max-devices and --allow-flagged of them): "
            "`gpuscale advise --bench FILE` with the others shows what they change."
        )
    return (
        explained + checks,
        (
            "Predicted throughput speedup by device count with its 80% interval, measured "
            "runs at N > 1 overlaid (hollow grey: flagged, not used)",
            svg,
            files,
        ),
        decision + checks,
        None,
    )


def measured_answer(scaling: pd.DataFrame) -> str:
    """The top of the report's line on what the bench measured at N > 1: each trusted
    run's speedup, or that none is trustworthy (never a result from flagged runs)."""
    multi = scaling[(scaling["accelerators"] > 1) & scaling["speedup"].notna()]
    kept = multi[~multi["flagged"].astype(bool)]
    if multi.empty:
        where = on_a_larger_host(2, most_host_devices(scaling))
        return (
            f"Your hardware: no multi-device run measured (run gpuscale bench --nproc 1,2{where})."
        )
    if kept.empty:
        return (
            f"Your hardware: no trustworthy multi-device run ({len(multi)} flagged, see "
            "'Your hardware'): no measured answer."
        )
    said = ", ".join(
        f"{r.configuration} {r.speedup:.2f}x on {r.accelerators}" for r in kept.itertuples()
    )
    return f"Your hardware, measured speedup over one device: {said}."


def build_bench_section(
    table: pd.DataFrame, out: FigureFiles, *, advice: BenchAdvice | None = None
) -> BenchSection | None:
    """Findings, figures (written beside the report), the table and the runs that did not
    measure; None without any run.
    With ``advice`` (computed before: ``report.bench_advice.advice_on_bench``), it is
    added, or why it was not given."""
    scaling = bench_scaling(table)
    failed = failed_runs(table)
    if scaling.empty:
        if not failed:
            return None
        labels = list(COLUMNS.values())
        refused = "no run of the results measured (every one failed)" if advice else None
        return BenchSection(
            ["No run measured (see below)."], [], labels, [], failed, advice_refused=refused
        )
    figures, not_drawn = [], []
    for make, stem, title in (
        (step_breakdown, "bench_step_breakdown", "Where step time goes, by model size"),
        (speedup_by_size, "bench_speedup_by_size", "Speedup over one device by model size"),
    ):
        if make is speedup_by_size and scaling["accelerators"].max() == 1:
            continue
        try:
            svg, files = out.save(lambda m=make: m(scaling), stem, scaling)
        except NothingToDraw as why:  # said in the figure's place, among the findings
            not_drawn.append(f"{title}: not drawn, {why}.")
            continue
        figures.append((title, svg, files))
    findings = bench_findings(scaling) + not_drawn
    answer = [measured_answer(scaling)]
    refused = None
    if advice is not None:
        lines, figure, top, refused = advice_figure(scaling, out, advice)
        findings += lines
        answer += top
        figures += [figure] if figure is not None else []
    rows = [
        {label: number(r[col]) for col, label in COLUMNS.items()}
        for r in scaling.to_dict("records")
    ]
    return BenchSection(
        findings, figures, list(COLUMNS.values()), rows, failed, answer, advice_refused=refused
    )
