"""The report's "your hardware" section, from ``gpuscale bench`` results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import pandas as pd

from gpuscale.analysis.bench_scaling import bench_scaling, speedups_as_predicted
from gpuscale.analysis.bench_sentences import speedup_basis, speedup_over, wrapped_baselines
from gpuscale.analysis.bench_view import spans_machines
from gpuscale.quantities import agreeing, counted, filled, joined, of_the, span
from gpuscale.report.bench_answer import (
    advised_runs,
    advised_scope,
    answering,
    measured_speedup,
    others_answer,
    outlasted,
    rerun_options,
)
from gpuscale.report.bench_checks import ReadRun, drawn, read_runs
from gpuscale.report.bench_checks import checks as measured_checks
from gpuscale.report.bench_evidence import evidence_column, weak_tag
from gpuscale.report.bench_figures import (
    breakdown_title,
    predicted_scaling,
    speedup_by_size,
    step_breakdown,
)
from gpuscale.report.bench_words import bench_findings, bench_summary
from gpuscale.report.figures_common import NothingToDraw
from gpuscale.report.svg import FigureFiles
from gpuscale.report.text_table import columns_text
from gpuscale.tables.advice import as_throughput
from gpuscale.tables.bench import (
    differing_fields,
    most_host_devices,
    on_a_larger_host,
)

if TYPE_CHECKING:  # the section is given a computed advice: the engine is not loaded
    from gpuscale.report.bench_advice import BenchAdvice

COLUMNS = {
    "configuration": "Model",  # with its configuration where the file holds several
    "platform": "Ran on",  # device and backend: only where the rows ran on several
    "strategy": "Strategy",  # these three, as the platform, only where the rows differ
    "precision": "Precision",
    "accum": "Accum. steps",  # micro-batches per step: a step of 4 times 4 forwards
    "params": "Parameters",
    "accelerators": "Devices",
    "nnodes": "Nodes",  # only where a run spanned several (``bench_view.spans_machines``)
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
    # why a run's energy and power are no measurement (its meter dropped out: the advice
    # leaves them out), only where a run's is; its times stand, so it is no flag above
    "energy_flag": "Energy not used because",
}


@dataclass(frozen=True, slots=True)
class BenchSection:
    """The section's two views, as ``gpuscale advise``'s: ``summary`` (what was benched)
    shown, ``findings`` (the summary first, then every other finding and the advice's
    whole explanation) the rest of it, collapsed; ``answer`` the report's top lines."""

    findings: list[str]
    figures: list[tuple[str, str, list[str]]]  # (title, inline svg, file names)
    columns: list[str]
    rows: list[dict[str, str]]
    failed: list[str] = field(default_factory=list)  # runs that did not measure, one line each
    answer: list[str] = field(default_factory=list)  # for the top of the report
    advice_refused: str | None = None  # why the advice asked for was not given
    speedup_basis: str = ""  # what the columns shown are against (``speedup_basis``)
    summary: list[str] = field(default_factory=list)  # findings' first lines, shown
    # the advice's predicted scaling against the runs: drawn beside ``answer``
    answer_figure: tuple[str, str, list[str]] | None = None
    # the advised runs at N > 1 as the advice reads them: the answer's measured speedups,
    # its checks and the summary's line on them say them from these
    read: tuple[ReadRun, ...] = ()
    # the results file's lines the loader skipped, with why (user text: escaped), their
    # runs in nothing above; the first SKIPPED_SHOWN, then a count
    skipped: list[str] = field(default_factory=list)

    @property
    def drawn_in_section(self) -> list[tuple[str, str, list[str]]]:
        """``figures`` but the one drawn beside the answer."""
        return [f for f in self.figures if f is not self.answer_figure]

    @property
    def said(self) -> list[str]:
        """Every line the section says: the top's, then the collapsed view's."""
        return [*self.answer, *self.more]

    @property
    def more(self) -> list[str]:
        """The findings after the summary: the collapsed view."""
        return self.findings[len(self.summary) :]


def failed_runs(table: pd.DataFrame) -> list[str]:
    """One line per run that did not measure: model, devices, status, the error's first
    line (user text: the report escapes it)."""
    lines = []
    for r in table[table["status"] != "ok"].to_dict("records"):
        error = (str(r.get("error") or "").strip().splitlines() or [""])[0]
        lines.append(
            f"{r['model']} on {counted(int(r['accelerators']), 'device')}: {r['status']}"
            + filled(": {}", error)
        )
    return lines


# What the advice's line says where it rests on flagged runs: (used, --allow-flagged given).
_FLAGGED_USED = {
    (True, False): " (from flagged runs: less certain)",
    (True, True): " (from flagged runs, --allow-flagged: less certain)",
}


@dataclass(frozen=True, slots=True)
class _Advised:
    """The advice's part of the section (``advice_figure``)."""

    explained: list[str]  # its explanation and every check not at the top
    figure: tuple[str, str, list[str]] | None  # the predicted scaling against the runs
    decision: list[str]  # the top's: the advice's lines
    first: list[str]  # the top's: the measured runs against it
    refused: str | None = None  # why no advice was given
    read: tuple[ReadRun, ...] = ()  # the advised runs at N > 1 as it reads them


def advice_figure(scaling: pd.DataFrame, out: FigureFiles, given: BenchAdvice) -> _Advised:
    """The advice computed for the bench (``gpuscale advise --bench``): its explanation,
    the predicted scaling against the measured points, the lines for the top of the
    report (the advice's decision and what qualifies it; each measured N > 1 against it),
    why no advice was given (None when it was: what ``gpuscale advise --bench`` says),
    and the runs it reads."""
    result = given.advice
    if result is None:
        refused = [f"No advice: {given.refused}"]
        return _Advised(refused, None, refused, [], given.refused)
    cal = result.calibration
    assert cal is not None
    predicted = as_throughput(result.predictions)
    alternative = None if result.alternative is None else as_throughput(result.alternative)
    model = cal.model.name
    # only the runs of the advice's model, device and configuration are set beside it
    advised = advised_runs(scaling, cal)
    # each run's speedup over the one-device step the prediction models (its ``basis``),
    # not the table's over the bare module: a measured speedup set against a prediction
    # divides by the same kind of step
    bases = speedups_as_predicted(scaling)[advised]
    measured = scaling[advised].assign(speedup=bases["speedup"], basis=bases["basis"])
    allowed = given.allow_flagged
    read = read_runs(measured, allowed=allowed, found=result.disagreements)
    frames = [predicted, alternative]
    checks = measured_checks(
        frames,
        measured,
        measured["configuration"],
        scaling,
        allowed=allowed,
        found=result.disagreements,
    )
    from gpuscale.advice.explain.document import table_title  # the table's own title

    title = f"Advice: {table_title(cal)}"
    # the prediction of the runs' own configuration under them, only those runs on it
    shown, points, left_off = drawn(frames, measured, scaling)
    kind, kept = _kept(shown)
    series = f"predicted, {kind} scaling"
    # the flagged points the advice reads: labelled so, never "not used"
    used_points = tuple(r.at for r in read if r.flagged and r.read and r.at in points.index)
    svg, files = out.save(
        lambda: predicted_scaling(shown, points, title, used=used_points, series=series),
        "advice_predicted_scaling",
        shown,
        points,
        title,
        used_points,
        series,
    )
    # the short answer, as ``gpuscale advise`` says it by default (``advice.explain.answer``); the
    # caveats and the whole explanation behind it, as ``--explain`` gives them
    # said only where the advised model's own runs were flagged and so used: --allow-flagged
    # given over clean runs (or beside a broken model, never used) used nothing flagged; a
    # configuration with only flagged runs rests on them, --allow-flagged or not (the
    # checks read it off the advice's disagreement, as its answer does)
    used = allowed and bool(measured["flagged"].fillna(False).astype(bool).any())
    used = used or any(r.flagged and r.read for r in read)
    warned = _FLAGGED_USED.get((used, allowed), "")
    # the model's name alone where every run of it is of the configuration advised on,
    # else with that configuration and platform (never "mlp-4m" where it ran on two)
    scope = advised_scope(scaling, advised, cal)
    of = model if advised.equals(scaling["model"] == model) else scope
    from gpuscale.advice.explain import answer  # the engine's words, loaded with its result

    short = answer.lines(result)
    decision = [f"Advice for {of}{warned}: {line}" for line in short[:1]] + short[1:]
    explained = [f"Advice for {of}: {line}" for line in result.explanation]
    # the advice names `advise`'s options (--samples, --collectives...): not the report's
    explained.append(
        f"Advice for {of}: the options it names are `gpuscale advise`'s (the report "
        "takes only --interconnect, --max-devices, --strategy and --allow-flagged of "
        "them): `gpuscale advise --bench FILE` with the others shows what they change."
    )
    on = f" of what the advice is on ({scope})"
    own = measured_answer(scaling, advised, on, rerun_options(scaling, cal), read)
    other = others_answer(scaling, advised, cal)
    # at the top, as `gpuscale advise` says it: the advice's own lines; the advised runs'
    # measured speedups where there are any (the advice already names what to measure
    # where there are none); a run outside its interval or a flagged run used. The other
    # models' runs and every other check: behind, with the explanation.
    ran = bool(((measured["accelerators"] > 1) & measured["speedup"].notna()).any())
    first = [own] * ran + [c.line for c in checks if c.first]
    behind = [own] * (not ran) + [c.line for c in checks if not c.first] + [other] * bool(other)
    caption = (
        f"Predicted throughput speedup by device count with its 80% interval, {kind} scaling "
        f"({kept}){_not_the_advices(shown, predicted)}, "
        + (
            "measured runs at N > 1 of that configuration overlaid (hollow grey: "
            f"flagged{'' if used else ', not used'})"
            if len(points)
            else "no run of that configuration measured at N > 1 to set beside it"
        )
        + left_off
    )
    return _Advised(
        explained + behind,
        (caption, svg, files),
        decision,
        first,
        read=read,
    )


def _kept(frame: pd.DataFrame) -> tuple[str, str]:
    """Which scaling a predicted table is, read off its rows, and what it keeps: ``strong``
    (one global batch at every count), ``weak`` (one per-device batch and accumulation) or
    ``batch-searched`` (neither: the convergence model's batch at each count)."""
    batches = f"per-device batch {_batches(frame)}"
    if frame["global_batch"].nunique() == 1:
        return "strong", f"global batch {int(frame['global_batch'].iloc[0])} kept, {batches}"
    if frame["batch_per_device"].nunique() == 1 and frame["accum"].nunique() == 1:
        return "weak", f"{batches} kept, the global batch growing with the devices"
    return "batch-searched", batches


def _not_the_advices(shown: pd.DataFrame, advised: pd.DataFrame) -> str:
    """Where the figure draws another table than the advice's (its weak-scaling
    alternative, the runs' own configuration): the advice's scaling, whose speedups the
    answer above quotes; "" where it draws the advice's own."""
    if shown is advised:
        return ""
    kind, kept = _kept(advised)
    return f", the runs' configuration: the advice above is {kind} scaling ({kept})"


def _batches(frame: pd.DataFrame) -> str:
    """``8`` (weak scaling), or ``8 -> 4`` where the predicted counts keep the global
    batch: the per-device batch from the first count to the last."""
    first, last = int(frame["batch_per_device"].iloc[0]), int(frame["batch_per_device"].iloc[-1])
    return span(str(first), str(last), " -> ")


def nothing_measured(failed: int) -> str:
    """The answer on a results file none of whose runs measured."""
    runs, whose = of_the(failed, failed, "run"), agreeing(failed, "its", "each one's")
    them = agreeing(failed, "it", "them")
    return (
        f"Your hardware: no run of the bench results measured, {runs} failed ({whose} cause "
        f"under 'Your hardware'): mend {them} and run the bench again with --resume (it "
        "measures only what is missing)."
    )


def measured_answer(
    scaling: pd.DataFrame,
    only: pd.Series | None = None,
    of: str = "",
    rerun: str = "",
    read: tuple[ReadRun, ...] = (),
) -> str:
    """The top of the report's line on what the bench measured at N > 1: each trusted
    run's speedup, or that none is trustworthy (never a result from flagged runs the
    advice leaves out); with ``only`` (a mask of ``scaling``), of those runs alone, ``of``
    saying which and ``rerun`` the bench's options that measure them; ``read`` (the
    advice's reading of those runs, ``bench_checks.read_runs``): a flagged run it uses is
    said with its speedup, as flagged and used, as the advice's lines say it."""
    chosen = scaling if only is None else scaling[only]
    multi = chosen[(chosen["accelerators"] > 1) & chosen["speedup"].notna()]
    multi = multi[~outlasted(scaling)[multi.index]]  # a run of more steps answers for it
    used = {r.at: r.use for r in read if r.flagged and r.read}
    kept = multi[answering(scaling, read)[multi.index]]
    if multi.empty:
        where = on_a_larger_host(2, most_host_devices(scaling))
        named = filled(" {}", rerun)  # the configuration advised on, never another's
        return (
            f"Your hardware: no multi-device run{of} measured (run gpuscale bench{named} "
            f"--nproc 1,2{where})."
        )
    if kept.empty:
        return (
            f"Your hardware: no trustworthy multi-device run{of} ({len(multi)} flagged, see "
            "'Your hardware'): no measured answer."
        )
    head = f"the table's measured speedup over one device{of}"
    if read:  # the runs the advice reads: each over the step its prediction models, as it says
        bases = speedups_as_predicted(scaling).loc[kept.index]
        kept = kept.assign(speedup=bases["speedup"])
        head = f"measured speedup{of}, {speedup_over(*sorted(set(bases['basis'])))}"
    said = "; ".join(  # each run's device and backend: never a CPU result read as a GPU's,
        # and its evidence grade: never a weak run's speedup read as a finding
        measured_speedup(r)
        + (
            f", flagged ({', '.join(r.flag_kinds)}), {used[at]}: less certain"
            if at in used
            else filled(", {}", weak_tag(scaling, kept.loc[[at]]))
        )
        for at, r in zip(kept.index, kept.itertuples(), strict=True)
    )
    return f"Your hardware, {head}: {said}."


# The Evidence column's words before a run that a run of more steps outlasted.
OUTLASTED = "outlasted: not read (a run of more steps of its configuration and count is)"


def _evidence_said(scaling: pd.DataFrame) -> pd.Series:
    """The table's Evidence column (``evidence_column``), a run outlasted by one of more
    steps of its configuration and count (``bench_answer.outlasted``) said so first: the
    findings and the advice read the longer run, never its speedup."""
    said = evidence_column(scaling)
    shorter = outlasted(scaling) if len(scaling) else pd.Series(False, index=scaling.index)
    return said.where(~shorter, (OUTLASTED + "; " + said).str.rstrip("; "))


SKIPPED_SHOWN = 20  # lines skipped listed one by one; past them, a count


def build_bench_section(
    table: pd.DataFrame,
    out: FigureFiles,
    *,
    advice: BenchAdvice | None = None,
    skipped: Sequence[str] = (),
) -> BenchSection | None:
    """Findings, figures (written beside the report), the table, the runs that did not
    measure and the file's lines the loader skipped (``skipped``: ``BenchFile.skipped``);
    None without any run.
    With ``advice`` (computed before: ``report.bench_advice.advice_on_bench``), it is
    added, or why it was not given."""
    rest = len(skipped) - SKIPPED_SHOWN
    more = [f"{counted(rest, 'more line')} skipped"] if rest > 0 else []
    built = _built(table, out, advice)
    return None if built is None else replace(built, skipped=[*skipped[:SKIPPED_SHOWN], *more])


def _built(
    table: pd.DataFrame, out: FigureFiles, advice: BenchAdvice | None
) -> BenchSection | None:
    """:func:`build_bench_section` but the lines skipped."""
    scaling = bench_scaling(table)
    scaling = scaling.assign(evidence_said=_evidence_said(scaling))
    failed = failed_runs(table)
    if scaling.empty:
        if not failed:
            return None
        refused = "no run of the results measured (every one failed)" if advice else None
        # the hardware asked about leads the page and the command, as a measured answer
        # would; no table (it would be headers alone)
        said = [nothing_measured(len(failed))]
        return BenchSection(
            said, [], [], [], failed, answer=said, advice_refused=refused, summary=said
        )
    # the decision first (where advice was asked), then what was measured, each run
    # with its platform, then the advised model's runs against the advice
    answer = [measured_answer(scaling)]
    refused, answer_figure, read, explained = None, None, (), []
    if advice is not None:
        given = advice_figure(scaling, out, advice)
        refused, read, explained = given.refused, given.read, given.explained
        # with the advice, its lines and the measured runs it is on (against it); refused,
        # why, then what was measured (``bench_answer``): never another model's run as
        # the advice's answer
        answer = [*given.decision, *given.first] if refused is None else [*given.decision, *answer]
        answer_figure = given.figure  # drawn beside the answer, as the MLPerf answer's
    # the flagged runs the advice reads, drawn as such
    used = tuple(r.at for r in read if r.flagged and r.read)
    figures, not_drawn = [], []
    for make, stem, title in (
        (step_breakdown, "bench_step_breakdown", breakdown_caption(scaling)),
        (speedup_by_size, "bench_speedup_by_size", "Speedup over one device by model size"),
    ):
        if make is speedup_by_size and scaling["accelerators"].max() == 1:
            continue
        try:
            if make is speedup_by_size:
                svg, files = out.save(lambda: speedup_by_size(scaling, used), stem, scaling, used)
            else:
                svg, files = out.save(lambda m=make: m(scaling), stem, scaling)
        except NothingToDraw as why:  # said in the figure's place, among the findings
            not_drawn.append(f"{title}: not drawn, {why}.")
            continue
        figures.append((title, svg, files))
    if answer_figure is not None:
        figures.append(answer_figure)
    # the findings read the runs as the advice reads them (``bench_answer.answering``)
    findings = bench_findings(scaling, read) + not_drawn + explained
    summary = bench_summary(scaling, read)
    shown = shown_columns(scaling)
    rows = [
        {shown[col]: text for col, text in said.items()}
        for said in columns_text(scaling.to_dict("records"), list(shown))
    ]
    return BenchSection(
        findings,
        figures,
        list(shown.values()),
        rows,
        failed,
        answer,
        advice_refused=refused,
        summary=summary,
        answer_figure=answer_figure,
        read=read,
        # and where a configuration's is the wrapper's one-rank step, what that overstates
        speedup_basis="; ".join(
            [speedup_basis(tuple(shown), lambda c: shown.get(c, c)), *wrapped_baselines(scaling)]
        ),
    )


# shown only where the rows differ in them: how each row was run
HOW_RUN = ("platform", "strategy", "precision", "accum")


def shown_columns(scaling: pd.DataFrame) -> dict[str, str]:
    """The table's columns: ``COLUMNS``, the device and backend (``platform``), the
    strategy, precision and accumulation steps only where the rows differ in them (else
    the first finding names the one platform, and every row ran alike); each strategy's
    column against the bare module only where a row ran that strategy."""
    ran = set(scaling.get("strategy", pd.Series(dtype=object)).dropna()) or {"ddp"}
    return {
        col: label
        for col, label in COLUMNS.items()
        if (col not in HOW_RUN or (col in scaling and scaling[col].nunique(dropna=False) > 1))
        and (not col.endswith("_vs_bare") or col.split("_")[0] in ran)
        and (col != "nnodes" or spans_machines(scaling))
        and (col != "energy_flag" or _energy_flagged(scaling))
    }


def _energy_flagged(scaling: pd.DataFrame) -> bool:
    """Whether any run's energy is flagged (``energy_flag``; a table of an earlier gpuscale
    lacks the column: none is)."""
    flags = scaling.get("energy_flag", pd.Series(dtype=str))
    return bool(flags.fillna("").astype(str).ne("").any())


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
