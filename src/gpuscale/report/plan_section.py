"""The report's plan section: per study workload, ``gpuscale.plan`` for the accelerator
family that ran the most counts (the answer's, ``analysis.crossing.scaling_family``) at
the counts the study discussed, as a table and one figure."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from gpuscale.analysis.crossing import scaling_family
from gpuscale.names import UnknownNameError
from gpuscale.planning import PlanRequest
from gpuscale.planning.api import as_frame
from gpuscale.planning.cache import fits_of
from gpuscale.planning.crossing import CROSSING_COLUMNS, crossing_words
from gpuscale.planning.records import Fits
from gpuscale.planning.result import PlanError, plan_result
from gpuscale.planning.systems import timed, unplanned
from gpuscale.planning.terminal import plan_interval, thin_mark
from gpuscale.quantities import number
from gpuscale.report.rounds_section import not_drawn
from gpuscale.report.svg import FigureFiles
from gpuscale.report.text_table import columns_text
from gpuscale.tables import DEFAULT_EFFICIENCY_THRESHOLD, STUDY_WORKLOADS, display_name
from gpuscale.tables.refusals import FieldError, as_options
from gpuscale.tables.request_text import option_names

if TYPE_CHECKING:  # its type alone: matplotlib only in the process that draws
    from gpuscale.report.style import Chart

COUNTS = (8, 16, 64, 256, 1024)
SHOWN = {
    "accelerators": "devices",
    "time_to_train_min": "minutes",
    "interval": "80% interval, min",
    "global_batch": "global batch",
    "throughput_efficiency": "throughput eff.",
    "convergence_factor": "convergence factor",
    "accelerator_hours": "accelerator-hours",
    "extrapolated": "extrapolated",
    "stops_paying": "picked by (the criteria whose last paying count it is)",
    "flags": "flags (kept out of the picks)",
    "rests_on": "rests on (one software stack)",
    # where the count's level or its faster-than-linear support comes from other results:
    # the hardware generation or software stack it crosses (``planning.crossing``)
    "crosses": "crosses (from what to what)",
}


@dataclass(frozen=True, slots=True)
class PlanSection:
    """What the template's extras loop shows, plus the plan tables (``plan_tables.html``)."""

    anchor: str
    title: str
    findings: list[str]
    figures: list[tuple[str, str, list[str]]]
    tables: list[tuple[str, list[str], list[dict[str, str]]]] = field(default_factory=list)
    plans: list[PlanData] = field(default_factory=list)  # those shown (plan_bases)
    commands: list[str] = field(default_factory=list)  # the command of each table
    not_drawn: str = ""  # the figures left out and how to draw them (no finding)


def _fixed(value: object, spec: str) -> str:
    """``value`` formatted by ``spec``; "" where it is missing (a count the plan gives no
    time: its cells were "nan" and "-")."""
    return "" if pd.isna(value) else format(value, spec)


def _rows(table: pd.DataFrame) -> list[dict[str, str]]:
    """The plan table's rows as the report shows them, the plan's flags included (a
    flagged count is kept out of the "stops paying" picks, and the flag says why a faster
    count is not the one marked E' >= 0.8 x best), and what each count's comparison
    crosses (``planning.crossing.crossing_words``: ``hardware generation (Ampere to
    Hopper)``; names from the logs, escaped where the page renders them)."""
    measured = ["time_to_train_min", "convergence_factor", "accelerator_hours"]
    said = columns_text(table[measured].to_dict("records"), measured)
    return [
        {
            SHOWN["accelerators"]: f"{int(r.accelerators):,}",
            SHOWN["time_to_train_min"]: texts["time_to_train_min"],
            SHOWN["interval"]: plan_interval(r.time_to_train_min_low, r.time_to_train_min_high),
            SHOWN["global_batch"]: _fixed(r.global_batch, ",.0f"),
            SHOWN["throughput_efficiency"]: _fixed(r.throughput_efficiency, ".2f"),
            SHOWN["convergence_factor"]: texts["convergence_factor"],
            SHOWN["accelerator_hours"]: texts["accelerator_hours"],
            SHOWN["extrapolated"]: number(bool(r.extrapolated)),
            SHOWN["stops_paying"]: number(r.stops_paying),
            SHOWN["flags"]: number(r.flags),
            SHOWN["rests_on"]: thin_mark(r.rests_on, r.rests_on_submitter, r.rests_on_outlier),
            SHOWN["crosses"]: crossing_words(
                {c: getattr(r, c) for c in CROSSING_COLUMNS}
            ).removeprefix("crosses ")
            or "none",
        }
        for r, texts in zip(table.itertuples(index=False), said, strict=True)
    ]


@dataclass(frozen=True, slots=True)
class PlanData:
    """One workload's plan, computed (no drawing): picklable, from the analysis worker."""

    workload: str
    family: str
    table: pd.DataFrame  # at COUNTS
    curve: pd.DataFrame  # on a dense grid of counts
    systems: pd.DataFrame  # the measured systems fitted
    notes: list[str]
    round: str = ""  # the round whose level the plan is at


@dataclass(frozen=True, slots=True)
class NotPlanned:
    """A workload the report does not plan (it plans the study's), on the ``family`` that
    ran the most counts: said with the command that plans it at the ``counts`` that family ran (a
    fixed list may hold none it can time: GB200 on Llama 3.1 405B ran 256 to 2,496)."""

    workload: str
    family: str
    counts: tuple[int, ...]


def _grid(systems: pd.DataFrame) -> tuple[int, ...]:
    """The counts the figure's line is drawn at: 40 spread evenly in log over the counts
    asked and the family's measured counts, and those counts themselves (the plan moves
    its line at a count the family ran towards its results there and widens the interval
    to hold them: a grid without them drew the line before that, 2.08 min at 512 where the
    plan says 1.887, and left 128 and 512 of Llama2 between refused counts)."""
    measured = systems.get("accelerators", pd.Series([], dtype=int)).astype(int)
    low, high = min([*measured, COUNTS[0]]), max([*measured, COUNTS[-1]])
    spread = np.geomspace(low, high, 40).round().astype(int)
    return tuple(int(n) for n in np.unique(np.concatenate([spread, COUNTS, measured])))


def plan_data(
    scores: pd.DataFrame, workloads: list[str], threshold: float = DEFAULT_EFFICIENCY_THRESHOLD
) -> list[PlanData | NotPlanned | str]:
    """Each study workload present planned on the family that ran the most counts at ``COUNTS``
    (a sentence instead where no plan is possible; one for each other workload asked,
    with the command that plans it); the fits of ``scores`` are computed
    once (``gpuscale.planning.cache``) for every workload and the dense curve.
    ``threshold``: of the plan's E' threshold pick, the report's own (its answer table's)."""
    out: list[PlanData | NotPlanned | str] = []
    fits = fits_of(scores) if len(scores) else None
    left_out = unplanned(scores)  # a study workload of the open division only, said
    # the family of the results the plan rests on, as the answer's (of scored results): a
    # count only unscored results ran (v4.1's 56 H100s on Llama2) decides nothing; a
    # workload with none has the family of all its results, for the plan's refusal
    usable = timed(scores)
    for workload in [w for w in STUDY_WORKLOADS if w in workloads]:
        family = scaling_family(usable[usable["workload"] == workload]) or scaling_family(
            scores[scores["workload"] == workload]
        )
        if not family:
            continue
        request = PlanRequest(
            workload=workload, accelerator=family, devices=COUNTS, threshold=threshold
        )
        try:
            if fits is None:
                raise PlanError("no MLPerf results in the data given")
            result = plan_result(request, fits, left_out)
        except (PlanError, UnknownNameError) as exc:  # v1.1's BERT: open division only
            out.append(f"{display_name(workload)}: no plan ({command_line_words(exc)}).")
            continue
        systems = pd.DataFrame(result.systems).rename(columns={"system": "system_name"})
        curve = as_frame(plan_result(replace(request, devices=_grid(systems)), fits, left_out))
        table = as_frame(result)
        notes = list(result.notes)
        out.append(PlanData(workload, family, table, curve, systems, notes, result.model["round"]))
    for workload in [w for w in workloads if w not in STUDY_WORKLOADS]:  # said, never dropped
        if fits is None or workload not in fits["workloads"]:
            if anyone := scaling_family(scores[scores["workload"] == workload]):
                out.append(_no_plan(workload, anyone, fits, left_out))
            continue
        # its counts too: one only unscored results ran (v1.1's DLRM at 64 and 112) has no
        # time in the command named
        rows = usable[usable["workload"] == workload]
        family = scaling_family(rows)  # the fits hold the workload: some family ran it
        ran = rows.loc[rows["accelerator_family"] == family, "accelerators"].dropna()
        out.append(NotPlanned(workload, family, tuple(sorted({int(n) for n in ran}))))
    return out


def _no_plan(workload: str, family: str, fits: Fits | None, left_out: dict[str, str]) -> str:
    """Why ``workload`` has no plan, the plan's own refusal as the command line says it
    (v1.1's MiniGo: none of its results is scored), where the report plans no such
    workload: naming a command that is refused would send its readers to an error."""
    request = PlanRequest(workload=workload, accelerator=family, devices=COUNTS)
    try:
        if fits is None:
            raise PlanError("no MLPerf results in the data given")
        plan_result(request, fits, left_out)
        why = f"no measured system of {workload} in the data given"
    except (PlanError, UnknownNameError) as exc:
        why = command_line_words(exc)
    return f"{display_name(workload)}: no plan ({why})."


def command_line_words(exc: Exception) -> str:
    """Why a workload has no plan as the command line says it, the report's readers'
    words: a refused field as ``gpuscale plan``'s option and the round to give as
    ``--round v5.0`` (``tables.refusals``: Python's ``str()`` names ``workload`` and
    ``plan(..., scores=load_round('v5.0').scores)``)."""
    if isinstance(exc, FieldError):
        return exc.as_options(option_names(PlanRequest))
    if isinstance(exc, UnknownNameError):
        return as_options(exc.said)
    return str(exc)


def command(
    rounds: list[str] | None, item: PlanData | NotPlanned, sources: Sequence[str] = ()
) -> str:
    """The ``gpuscale plan`` command that plans ``item`` from the same results as the
    report: its ``sources`` (the data arguments it was read from) where given, else its
    ``rounds`` by name (names quoted for a shell); at :data:`COUNTS`, or the counts a
    workload not planned here ran."""
    given = sources or [a for r in rounds or [] for a in ("--round", r)]
    flags = "".join(f" {shlex.quote(a)}" for a in given)
    counts = item.counts if isinstance(item, NotPlanned) else COUNTS
    return (
        f"gpuscale plan{flags} -w {shlex.quote(item.workload)} -a {shlex.quote(item.family)} "
        f"-n {','.join(map(str, counts))}"
    )


def data_sentence(rounds: list[str], sources: Sequence[str] = ()) -> str:
    """Which results the section plans from, and that each plan's ``gpuscale plan``
    command (beside it) plans from the same (without ``--round`` it plans from every
    bundled round: other minutes)."""
    said = f"Planned from the results of {', '.join(rounds)} loaded in this report, as the "
    if sources:  # raw rounds: the command reads the same paths
        return (
            f"{said}`gpuscale plan` command beside each plan does, given the paths this report "
            "read; `gpuscale plan` without them plans from every bundled round, so its minutes "
            "can differ."
        )
    return (
        f"{said}`gpuscale plan --round ...` command beside each plan does; `gpuscale plan` "
        "without --round plans from every bundled round, so its minutes can differ."
    )


def _plan_chart(item: PlanData) -> Chart:
    """The plan figure of ``item`` (``gpuscale.report.plan_figures``)."""
    # lazy: matplotlib, only in the process that draws (a report's figure worker)
    from gpuscale.report.plan_figures import plan_chart

    return plan_chart(item.curve, item.table, item.systems, item.workload, item.family)


def plan_section(
    data: list[PlanData | NotPlanned | str],
    out: FigureFiles,
    basis: object = None,
    rounds: list[str] | None = None,
    sources: Sequence[str] = (),
) -> PlanSection | None:
    """The section: a table, a figure (with ``out.every``) and the model's sentences per
    planned workload.
    ``basis``: what ``data`` was made from (picklable), to reuse earlier drawings of the
    same (``FigureFiles.save``); none: drawn afresh. ``rounds``: the rounds ``data`` was
    planned from, said once (:func:`data_sentence`); ``sources``: the data arguments the
    report was read from, for each plan's command (:func:`command`)."""
    findings, figures, shown, commands = [], [], [], []
    planned = [item for item in data if isinstance(item, PlanData)]
    if rounds and planned:
        findings.append(data_sentence(rounds, sources))
    left_out = ""  # the figures not drawn, said where there is a plan
    if planned:
        left_out = not_drawn(
            out,
            "each plan's figure (planned time against devices, its 80% band and the systems "
            "it was fitted on)",
        )
    for item in data:
        if isinstance(item, str):
            findings.append(item)
            continue
        if isinstance(item, NotPlanned):
            findings.append(
                f"{display_name(item.workload)}: not planned here (the report plans the "
                f"study's workloads); `{command(rounds, item, sources)}` plans it."
            )
            continue
        name = f"{display_name(item.workload)} on {item.family}"
        said = command(rounds, item, sources)
        shown.append((name, list(SHOWN.values()), _rows(item.table)))
        commands.append(said)
        findings.append(f"{name}: `{said}` plans it. " + " ".join(item.notes))
        if not out.every:
            continue
        svg, files = out.save(
            lambda i=item: _plan_chart(i),
            f"plan_{item.workload}",
            *((basis,) if basis is not None else ()),
        )
        figures.append((f"{name}: planned time against devices, as `{said}` plans", svg, files))
    if not shown and not findings:
        return None
    return PlanSection(
        "plan",
        "Plan a run (gpuscale plan)",
        findings,
        figures,
        shown,
        list(planned),
        commands,
        left_out,
    )
