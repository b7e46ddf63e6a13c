"""The report's "your hardware" section, from ``gpuscale bench`` results."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import pandas as pd

from gpuscale.analysis.bench_scaling import SPEEDUP_BASIS, bench_scaling
from gpuscale.quantities import counted, joined, number
from gpuscale.report.bench_advice import BenchAdvice
from gpuscale.report.bench_evidence import evidence_column, run_grade, weak_tag
from gpuscale.report.bench_figures import (
    breakdown_title,
    predicted_scaling,
    speedup_by_size,
    step_breakdown,
)
from gpuscale.report.bench_words import bench_findings
from gpuscale.report.figures_common import NothingToDraw
from gpuscale.report.svg import FigureFiles
from gpuscale.tables.advice import as_throughput, same_configuration
from gpuscale.tables.bench import (
    differing_fields,
    most_host_devices,
    on_a_larger_host,
    one_device,
)

COLUMNS = {
    "configuration": "Model",  # with its configuration where the file holds several
    "platform": "Ran on",  # device and backend: only where the rows ran on several
    "strategy": "Strategy",  # these three, as the platform, only where the rows differ
    "precision": "Precision",
    "accum": "Accum. steps",  # micro-batches per step: a step of 4 times 4 forwards
    "params": "Parameters",
    "accelerators": "Devices",
    "step_ms_mean": "Step (ms)",
    "samples_per_s": "Samples/s",
    "exposed_comm_ms": "Exposed comm. (ms)",
    "sync_wait_ms": "Sync wait (ms)",
    "comm_fraction": "Comm. share",
    "speedup": "Speedup",
    "efficiency": "Efficiency",
    "ddp_vs_bare": "DDP vs bare module (1 device)",  # each strategy's own column, shown
    "fsdp_vs_bare": "FSDP vs bare module (1 device)",  # only where a row ran it
    "evidence_said": "Evidence",  # the bench table's grade and why weak, as the CLI says
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
            f"{r['model']} on {counted(int(r['accelerators']), 'device')}: {r['status']}"
            + (f": {error[0]}" if error else "")
        )
    return lines


# An 80% interval whose ends differ by more than this factor tests no prediction: it
# holds both half and twice its middle (0.037-1.93x, a factor of 52, held anything)
TOO_WIDE_TO_TEST = 4.0


def _configuration(batch: int, accum: int, devices: int) -> str:
    """``per-device batch 8, global batch 16`` (with ``accumulation 4`` where any)."""
    of = f", accumulation {accum}" if accum > 1 else ""
    return f"per-device batch {batch}{of}, global batch {batch * accum * devices}"


def _ratio(batch: int, accum: int, base_batch: int, base_accum: int) -> str:
    """``per-device batch 8 against one device at batch 4``: what a speedup is of."""

    def at(b: int, a: int) -> str:
        return f"{b}" + (f" x {a} accumulated" if a > 1 else "")

    one = at(base_batch, base_accum)
    return f"per-device batch {at(batch, accum)} against one device at batch {one}"


def _predicted_at(frames: list[pd.DataFrame | None], n: int) -> str:
    """What the advice's speedups at ``n`` devices are of, or ``none predicted``."""
    said = []
    for frame in frames:
        if frame is None or frame.empty:
            continue
        first = frame.iloc[0]
        for r in frame[frame["accelerators"] == n].itertuples():
            said.append(
                _ratio(
                    int(r.batch_per_device),
                    int(r.accum),
                    int(first["batch_per_device"]),
                    int(first["accum"]),
                )
            )
    return joined(dict.fromkeys(said)) if said else "none predicted"


def against_measured(
    frames: list[pd.DataFrame | None],
    measured: pd.DataFrame,
    runs: pd.Series,
    scaling: pd.DataFrame,
    *,
    allowed: bool = False,
) -> list[str]:
    """One sentence per measured run (``runs``: their labels; ``measured``: rows of
    ``scaling``) at N > 1 of the advised model: its throughput speedup, graded as the bench
    table grades it (flagged, else weak or strong evidence), against the prediction of the
    same configuration only (``tables.advice.same_configuration`` among ``frames``,
    ``as_throughput``'s: the advice's, then its weak-scaling alternative), or that the
    advice predicts none; an interval wider than ``TOO_WIDE_TO_TEST`` said too wide to
    test the prediction, never that the run lies "inside" it (``allowed``: flagged runs
    were used, ``--allow-flagged``)."""
    base_batch = one_device(scaling, "batch_per_device")
    base_accum = one_device(scaling, "accum")
    lines = []
    for run, (at, r) in zip(runs, measured.iterrows(), strict=True):
        n = int(r["accelerators"])
        if n == 1 or pd.isna(r["speedup"]):
            continue
        batch, accum = int(r["batch_per_device"]), int(r["accum"])
        config = _configuration(batch, accum, n)
        use = "used by the advice (--allow-flagged)" if allowed else "left out of the advice"
        grade = run_grade(scaling, measured.loc[[at]])
        state = f"flagged, {use}: {r['flags']}" if r["flagged"] else grade
        said = f"Measured {run} on {n} devices ({config}): {r['speedup']:.2f}x ({state}), "
        base = (int(base_batch[at]), int(base_accum[at]))
        row = same_configuration(frames, n, batch, accum, base)
        if row is None:
            lines.append(
                f"{said}not compared: the advice predicts no run of this configuration "
                f"(this run: {_ratio(batch, accum, *base)}; the advice at {n} devices: "
                f"{_predicted_at(frames, n)}), and another configuration's prediction tests "
                "nothing."
            )
            continue
        low, high = float(row["speedup_low"]), float(row["speedup_high"])
        interval = (
            f"the advice's 80% throughput interval for this configuration ({number(low)}-"
            f"{number(high)}x about its prediction {number(row['speedup'])}x; a measured "
            "step has no convergence factor)"
        )
        if not low <= r["speedup"] <= high:
            lines.append(
                f"{said}OUTSIDE {interval}: the advice does not match this measurement"
                + (
                    "; re-measure (more --steps, a quieter machine) before trusting either."
                    if r["flagged"] or r.get("evidence") == "weak"
                    else "."
                )
            )
        elif low <= 0 or high / low > TOO_WIDE_TO_TEST:
            lines.append(
                f"{said}not a test of {interval}: the interval spans a factor of "
                f"{number(high / low) if low > 0 else 'infinity'}, too wide to test the "
                f"prediction (a test needs one within a factor of {TOO_WIDE_TO_TEST:g})."
            )
        else:
            lines.append(f"{said}inside {interval}.")
    return lines


def advice_figure(
    scaling: pd.DataFrame, out: FigureFiles, given: BenchAdvice
) -> tuple[list[str], tuple | None, tuple[list[str], list[str]], str | None]:
    """The advice computed for the bench (``gpuscale advise --bench``): its explanation,
    the predicted scaling against the measured points, the lines for the top of the
    report (the advice's decision and what qualifies it; each measured N > 1 against it),
    and why no advice was given (None when it was: what ``gpuscale advise --bench``
    says)."""
    result = given.advice
    if result is None:
        refused = [f"No advice: {given.refused}"]
        return refused, None, (refused, []), given.refused
    inputs = result.inputs
    assert inputs is not None
    predicted = as_throughput(result.predictions)
    alternative = None if result.alternative is None else as_throughput(result.alternative)
    model = inputs.name
    of_model = scaling["model"] == model
    measured = scaling[of_model]
    allowed = given.allow_flagged
    checks = against_measured(
        [predicted, alternative], measured, measured["configuration"], scaling, allowed=allowed
    )
    title = f"Advice: {model} with {inputs.strategy.upper()} on {inputs.network_name}"
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
    said = result.explanation[result.decision_line :]
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
            "takes only --interconnect, --max-devices, --strategy and --allow-flagged of "
            "them): "
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
        (decision, checks),
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
    said = "; ".join(  # each run's device and backend: never a CPU result read as a GPU's,
        # and its evidence grade: never a weak run's speedup read as a finding
        f"{r.configuration} {r.speedup:.2f}x on {r.accelerators} ({r.platform})"
        + (f", {tag}" if (tag := weak_tag(scaling, kept.loc[[at]])) else "")
        for at, r in zip(kept.index, kept.itertuples(), strict=True)
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
    scaling = scaling.assign(evidence_said=evidence_column(scaling))
    failed = failed_runs(table)
    if scaling.empty:
        if not failed:
            return None
        labels = [label for col, label in COLUMNS.items() if col not in HOW_RUN]
        refused = "no run of the results measured (every one failed)" if advice else None
        return BenchSection(
            ["No run measured (see below)."], [], labels, [], failed, advice_refused=refused
        )
    figures, not_drawn = [], []
    for make, stem, title in (
        (step_breakdown, "bench_step_breakdown", breakdown_caption(scaling)),
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
    # the decision first (where advice was asked), then what was measured, each run
    # with its platform, then the advised model's runs against the advice
    answer = [measured_answer(scaling)]
    refused = None
    if advice is not None:
        lines, figure, (decision, checks), refused = advice_figure(scaling, out, advice)
        findings += lines
        answer = [*decision, *answer, *checks]
        figures += [figure] if figure is not None else []
    shown = shown_columns(scaling)
    rows = [
        {label: number(r[col]) for col, label in shown.items()} for r in scaling.to_dict("records")
    ]
    return BenchSection(
        findings, figures, list(shown.values()), rows, failed, answer, advice_refused=refused
    )


# shown only where the rows differ in them: how each row was run
HOW_RUN = ("platform", "strategy", "precision", "accum")


def shown_columns(scaling: pd.DataFrame) -> dict[str, str]:
    """The table's columns: ``COLUMNS``, the device and backend (``platform``), the
    strategy, precision and accumulation steps only where the rows differ in them (else
    the first finding names the one platform, and every row ran alike); each strategy's
    column against the bare module only where a row ran that strategy."""
    ran = (set(scaling["strategy"].dropna()) if "strategy" in scaling else set()) or {"ddp"}
    return {
        col: label
        for col, label in COLUMNS.items()
        if (col not in HOW_RUN or (col in scaling and scaling[col].nunique(dropna=False) > 1))
        and (not col.endswith("_vs_bare") or col.split("_")[0] in ran)
    }


# How the breakdown's caption names a configuration field its bars tell apart.
_FIELD_WORDS = {"tf32": "TF32", "params": "size", "grad_comm": "gradient precision"}


def breakdown_caption(scaling: pd.DataFrame) -> str:
    """What the step breakdown's bars are: one per model, or per model and the fields
    its configurations differ in (``model and batch``), in the table's order."""
    fields = [_FIELD_WORDS.get(f, f.replace("_", " ")) for f in differing_fields(scaling)]
    if scaling["configuration"].str.contains(r" \(run \d+\)$").any():
        fields.append("run")
    bars = joined(["model", *fields])
    named = (
        ", each naming the device and backend it ran on"
        if scaling["platform"].nunique() > 1
        else ""
    )
    return f"{breakdown_title(scaling)}, one bar per {bars}{named}, smallest model first"
