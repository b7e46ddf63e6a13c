"""An advice's words (:class:`Worded`) and the views ``gpuscale advise`` shows: the table
(under the short answer, or ``--explain``'s explanation), CSV, and ``-f json``
(:func:`gpuscale.advice.explain.as_json.advice_document`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property, wraps
from typing import TypeVar

import pandas as pd

from gpuscale.advice.assumptions import OVERLAP_PRIOR, for_strategy, input_pipeline, settle
from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.answer import (
    AdviceView,
    issued,
    lines,
    link_read,
    withheld,
    withheld_how,
)
from gpuscale.advice.explain.as_json import advice_document
from gpuscale.advice.explain.caveats import (
    against_measured,
    flagged,
    measure_first,
    memory_said,
    time_unsure,
)
from gpuscale.advice.explain.explanation import explain
from gpuscale.advice.explain.phrasebook import (
    MODEL,
    TABLE,
    TERMS,
    said,
    sentence,
    spelled_as,
    strategy_words,
)
from gpuscale.advice.records import Assumption, Decision
from gpuscale.advice.remeasure import again
from gpuscale.advice.request_fields import DEFAULT_BATCH, DEFAULT_SAMPLES
from gpuscale.advice.types import Finding, TermId, maybe
from gpuscale.bench.evidence import FIRM_STEPS
from gpuscale.bench.slurm import across_nodes
from gpuscale.quantities import format_count, joined
from gpuscale.tables.bench import on_a_larger_host
from gpuscale.tables.views import TableView

T = TypeVar("T")

# What a terminal narrower than the table drops first.
TERM_COLUMNS = tuple(dict.fromkeys(row["column"] for row in TERMS.values()))
DROP_ORDER = (*TABLE["drop_first"], *TERM_COLUMNS, *TABLE["drop_last"])


def columns(advice: AdviceView) -> tuple[str, ...]:
    """The table's deciding columns (cost and energy: the decision's line)."""
    term = TERMS.get(advice.decision.limit.dominant_term, {}).get("column")
    frame = advice.predictions
    # the accumulation where used; whether the devices hold the model where some do not
    shown = {"accum": (frame["accum"] > 1).any(), "fits": not frame["fits"].all(), None: False}
    wanted = (*TABLE["leading"], term, *TABLE["trailing"], "fits")
    return tuple(column for column in wanted if shown.get(column, True))


def table_title(cal: Calibration) -> str:
    """What the predictions are of: the model, its strategy and the network over the counts
    (a link given by its numbers said by them); the table's title and the report's figure's."""
    name = cal.model.name  # a finding: a model named by its parameters
    named = not isinstance(name, str) or format_count(cal.model.spec.params) in name
    network = cal.machine.network
    if network.intra.name == "custom":
        said = sentence("custom_link", link=network.intra)
        network = replace(network, intra=replace(network.intra, name=said))
    on = network.name_over(cal.machine.device_counts)
    # the counts of a node priced on another ring than the whole node's, each its own
    found = link_read(cal)
    rings = found["at"] if found is not None else None
    priced = [r for r in rings or () if isinstance(r, Finding) and r["busbw_gbs"] is not None]  # type: ignore[union-attr]
    within = joined([sentence("title_ring", **dict(r.values)) for r in priced]) or None
    return sentence("table_title", cal=cal, named=named, on=on, within=within)


def advice_view(
    result: AdviceView, *, terminal: bool, document: bool = False, explain: bool = False
) -> TableView:
    """The predictions as a terminal shows them (``terminal`` False: CSV, the caveats as
    notes; ``document``: -f json's); ``explain``: every column and the explanation under the
    table, less the lines of the answer (``answer.shown``) said above it."""
    if document:
        return TableView(result.predictions, (), document=advice_document(result))
    title = table_title(result.calibration)
    if not terminal:  # CSV: on stderr what qualifies the rows, the answer's warnings too
        every = list(result.predictions.columns)
        notes = (*result.caveats, *result.decision.warnings)
        return TableView(result.predictions, every, title, notes=notes)
    frame = result.predictions
    worded = frame.assign(fits=frame["fits"].map(lambda fits: TABLE["fits"][str(fits)]))
    if not explain:
        return TableView(
            worded,
            columns(result),
            title,
            drop_order=DROP_ORDER,
            formats=TABLE["formats"],
            said=(sentence("table_more", n=len(result.caveats) or None),),
        )
    # under the answer said above the table: the explanation less the answer's own lines
    answer = set(lines(result, explained=True))
    said = tuple(f"- {line}" for line in result.explanation if line not in answer)
    held = () if frame["fits"].all() else ("fits",)  # as the default table shows it
    return TableView(worded, (*TABLE["explained"], *held), title, said=said)


def _overlap_of(a: Assumption, basis: str, last: str) -> Assumption:
    """``a`` as a sharded strategy's pipeline says it, where ``a`` is the prior's overlap:
    its ``basis`` and the ``last`` collective backward cannot hide (not DDP's bucket)."""
    if a.term != TermId.OVERLAP or not isinstance(a.value, Finding):
        return a
    value = a.value.with_values(last=last)
    return replace(a, value=value, basis=basis if a.basis == OVERLAP_PRIOR else a.basis)


def _worded(make: Callable[[Worded], T]) -> cached_property[T]:
    """A cached property whose words name a request's fields as its advice's reader does
    (``keywords``: Python's, else the command line's options)."""

    @wraps(make)
    def words(self: Worded) -> T:
        with spelled_as(self.keywords):
            return make(self)

    return cached_property(words)


@dataclass(frozen=True)
class Worded:
    """The words of an advice's record (``derived.Searched``), read when asked; its words
    name a request's fields as Python's ``keywords`` (``samples=``), else as the command
    line's options (``--samples``)."""

    keywords: bool = field(default=False, kw_only=True)

    def __str__(self) -> str:
        return "\n".join(f"- {line}" for line in self.explanation)

    @_worded
    def predictions(self) -> pd.DataFrame:
        return flagged(self.table, self.calibration.machine.power)

    @_worded
    def alternative(self) -> pd.DataFrame | None:
        return maybe(flagged, self.weak_table, self.calibration.machine.power)

    @_worded
    def assumptions(self) -> tuple[Assumption, ...]:
        """The assumptions as the strategy advised prices them, the input pipeline's at the
        rate the largest count consumes."""
        cal = self.calibration
        found = for_strategy(cal.said.assumptions, cal.run.strategy)
        if cal.run.strategy != "ddp":  # the prior's overlap: the pipeline of the collectives
            words = strategy_words(issued(cal))
            basis = MODEL["overlap_of_strategy"].format(pipeline=words["pipeline"])
            found = tuple(_overlap_of(a, basis, words["last"]) for a in found)
        load = self.input_rate
        if load is None:
            return found
        needed = input_pipeline(sentence("input_rate", load=load), load.samples_per_s)
        return tuple(needed if a.term == TermId.INPUT else a for a in found)

    @_worded
    def decision(self) -> Decision:
        """The search's Decision with its warnings and what to measure first in words."""
        d, cal = self.decided, self.calibration
        held_back = None if d.held_back is None else d.held_back.accelerators
        how = settle(
            self.assumptions,
            strong=cal.run.kept_global_batch is not None,
            held_back=held_back,
            refused=d.refused,
            host_devices=cal.runs.host_devices,
            again=again(cal.runs.evidence, (1, held_back or 2), cal.runs.host_devices),
        )
        first = measure_first(cal.runs.evidence, cal.runs.host_devices) or maybe(said, how)
        first = withheld_how(d) if d.withheld_by else first  # as the answer's last line says
        warnings = [*map(said, d.warnings), *time_unsure(d, self.assumptions)]
        if self.below_mlperf:  # the first count predicted faster than MLPerf's fastest allows
            more = len(self.below_mlperf[1:]) or None
            warnings.append(sentence("below_mlperf", b=self.below_mlperf[0], more=more))
        return replace(d, warnings=tuple(warnings), settle=first)

    @_worded
    def caveats(self) -> tuple[str, ...]:
        """What makes the headline less firm: the explanation's first lines."""
        cal, d = self.calibration, self.decision
        inter = next((a.value for a in self.assumptions if a.term == TermId.INTER_NODE), None)
        given = (*cal.search.defaults, *(["inter_node"] if inter else []))
        values = {"samples": DEFAULT_SAMPLES, "batch": DEFAULT_BATCH, "inter": inter, "cal": cal}
        options = ("samples", "batch", "link", "inter_node")  # the inputs not given, in order
        defaults = [sentence("default_used", option=o, **values) for o in options if o in given]
        headlines = [sentence("provisional", rests="; ".join(defaults))] if defaults else []
        power = cal.machine.power  # an assumed device's board power prices the kWh said
        if power.kind.value == "assumed" and power.watts is not None:
            headlines.append(sentence("energy_assumed", p=power))
        if self.wide_step_log is not None:  # the step too noisy: the runs that firm it
            n, host = d.read.accelerators, cal.runs.host_devices
            steps = getattr(cal.runs.evidence, "steps_needed", FIRM_STEPS)
            wide = {"width": self.wide_step_log, "devices": n, "host": on_a_larger_host(n, host)}
            wide["again"] = again(cal.runs.evidence, (1, n), host)
            per_node = getattr(cal.runs.evidence, "per_node", None)  # n beyond a node: across
            firm = f" --steps {steps}"
            wide["across"] = per_node and across_nodes("gpuscale bench", firm, n, per_node)
            headlines.append(sentence("not_firm", firm=steps, **wide))
        beside = against_measured(self.measured_counts, self.disagreements)
        held = memory_said(self.memory, cal.run.strategy, d.read.accelerators)
        first = filter(None, (held, said(cal.said.model_note), *withheld(self)))
        measured = (sentence("disagreement", d=m) for m in self.disagreements)
        return (*first, *measured, *headlines, *beside)

    @_worded
    def explanation(self) -> list[str]:
        """The caveats, then --explain's sentences."""
        return [*self.caveats, *explain(self)]

    @property
    def decision_line(self) -> int:
        """Where "Use N devices ..." stands in ``explanation``."""
        return len(self.caveats) + len(self.decision.warnings)
