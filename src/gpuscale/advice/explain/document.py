"""An advice's words (:class:`Worded`) and the views ``gpuscale advise`` shows: the table
(under the short answer, or ``--explain``'s explanation), CSV, and ``-f json``: the advice's
records field by field (:func:`advice_document`), the few keys renamed, derived or left out
declared once as data (``data/advice_json.json``; the keys are named in docs/schemas.md)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields, is_dataclass, replace
from enum import Enum
from functools import cached_property
from importlib import resources
from typing import TypeAlias

import pandas as pd

from gpuscale.advice.assumptions import (
    OVERLAP_PRIOR,
    again,
    for_strategy,
    input_pipeline,
    settle,
)
from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.answer import (
    AdviceView,
    issued,
    lines,
    moved_by,
    withheld,
    withheld_how,
)
from gpuscale.advice.explain.caveats import (
    against_measured,
    disagreement,
    flagged,
    headline,
    measure_first,
    memory_said,
)
from gpuscale.advice.explain.explanation import explain, scaling
from gpuscale.advice.explain.phrasebook import (
    MODEL,
    TABLE,
    TERMS,
    measured,
    said,
    sentence,
    strategy_words,
)
from gpuscale.advice.records import Assumption, Decision
from gpuscale.advice.request_fields import DEFAULT_BATCH, DEFAULT_SAMPLES
from gpuscale.advice.types import Finding, FindingKind, Measure, TermId, maybe
from gpuscale.bench.evidence import FIRM_STEPS
from gpuscale.hardware.memory import STRATEGIES, MemoryCheck
from gpuscale.quantities import format_count
from gpuscale.tables.json_depth import JSON
from gpuscale.tables.views import TableView

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
    return sentence("table_title", cal=cal, named=named, on=on)


def advice_view(
    result: AdviceView, *, terminal: bool, document: bool = False, explain: bool = False
) -> TableView:
    """The predictions as a terminal shows them (``terminal`` False: CSV, the caveats as
    notes; ``document``: -f json's)."""
    if document:
        return TableView(result.predictions, (), document=advice_document(result))
    title = table_title(result.calibration)
    if not terminal:  # CSV: on stderr what qualifies the rows, the answer's warnings too
        every = list(result.predictions.columns)
        notes = (*result.caveats, *result.decision.warnings)
        return TableView(result.predictions, every, title, notes=notes)
    if not explain:
        frame = result.predictions
        return TableView(
            frame.assign(fits=frame["fits"].map(lambda fits: TABLE["fits"][str(fits)])),
            columns(result),
            title,
            drop_order=DROP_ORDER,
            formats=TABLE["formats"],
            said=(sentence("table_more", n=len(result.caveats) or None),),
        )
    said = tuple(f"- {line}" for line in result.explanation)  # the equilibrium's last
    return TableView(result.predictions, tuple(TABLE["explained"]), title, said=said)


class Worded:
    """The words of an advice's record (``derived.Searched``), read when asked."""

    def __str__(self) -> str:
        return "\n".join(f"- {line}" for line in self.explanation)

    @cached_property
    def predictions(self) -> pd.DataFrame:
        return flagged(self.table, self.calibration.machine.power)

    @cached_property
    def alternative(self) -> pd.DataFrame | None:
        return maybe(flagged, self.weak_table, self.calibration.machine.power)

    @cached_property
    def assumptions(self) -> tuple[Assumption, ...]:
        """The assumptions as the strategy advised prices them, the input pipeline's at the
        rate the largest count consumes."""
        cal = self.calibration
        found = for_strategy(cal.said.assumptions, cal.run.strategy)
        if cal.run.strategy != "ddp":  # the prior's overlap: the pipeline of the collectives
            pipeline = strategy_words(issued(cal))["pipeline"]
            basis = MODEL["overlap_of_strategy"].format(pipeline=pipeline)
            found = tuple(
                replace(a, basis=basis)
                if a.term == TermId.OVERLAP and a.basis == OVERLAP_PRIOR
                else a
                for a in found
            )
        load = self.input_rate
        if load is None:
            return found
        needed = input_pipeline(sentence("input_rate", load=load), load.samples_per_s)
        return tuple(needed if a.term == TermId.INPUT else a for a in found)

    @cached_property
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
        warnings = [*map(said, d.warnings)]
        if self.below_mlperf:  # the first count predicted faster than MLPerf's fastest allows
            more = len(self.below_mlperf[1:]) or None
            warnings.append(sentence("below_mlperf", b=self.below_mlperf[0], more=more))
        return replace(d, warnings=tuple(warnings), settle=first)

    @cached_property
    def caveats(self) -> tuple[str, ...]:
        """What makes the headline less firm: the explanation's first lines."""
        cal, d = self.calibration, self.decision
        inter = next((a.value for a in self.assumptions if a.term == TermId.INTER_NODE), None)
        given = (*cal.search.defaults, *(["inter_node"] if inter else []))
        values = {"samples": DEFAULT_SAMPLES, "batch": DEFAULT_BATCH, "inter": inter, "cal": cal}
        options = ("samples", "batch", "link", "inter_node")  # the inputs not given, in order
        defaults = [sentence("default_used", option=o, **values) for o in options if o in given]
        headlines = headline(
            defaults=defaults,
            wide_step_log=self.wide_step_log,
            devices=d.read.accelerators,
            host_devices=cal.runs.host_devices,
            steps=getattr(cal.runs.evidence, "steps_needed", FIRM_STEPS),
            again=again(cal.runs.evidence, (1, d.read.accelerators), cal.runs.host_devices),
        )
        beside = against_measured(self.measured_counts, self.disagreements)
        held = memory_said(self.memory, cal.run.strategy, d.read.accelerators)
        first = filter(None, (held, said(cal.said.model_note), *withheld(self)))
        return (*first, *map(disagreement, self.disagreements), *headlines, *beside)

    @cached_property
    def explanation(self) -> list[str]:
        """The caveats, then --explain's sentences, the model chosen after the decision."""
        found = [*self.caveats, *explain(self)]
        model = self.calibration.said
        if not model.chosen or model.model_note:
            return found
        at = self.decision_line
        return [*found[: at + 1], said(model.chosen), *found[at + 1 :]]

    @property
    def decision_line(self) -> int:
        """Where "Use N devices ..." stands in ``explanation``."""
        return len(self.caveats) + len(self.decision.warnings)


# The document and each record field by field, but where ``data/advice_json.json`` names the
# record and the key (its "about" says how)
_KEYS = json.loads((resources.files("gpuscale") / "data" / "advice_json.json").read_text())
JSON_KEYS, DISAGREEMENT, SHAPE = _KEYS["records"], _KEYS["disagreement"], _KEYS["shape"]
UNSET_LEFT_OUT = _KEYS["unset_left_out"]
Key: TypeAlias = "str | list[str] | dict[str, Key] | None"


def plain(value: object) -> JSON:
    """``value`` as ``-f json`` gives it (``JSON_KEYS``)."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Measure):
        return measured(value)  # its words
    if is_dataclass(value) and type(value).__str__ is not object.__str__:
        return str(value)  # a record said whole
    if is_dataclass(value):
        name = type(value).__name__
        return laid_out(value, JSON_KEYS.get(name, {}), name, own=True)
    if isinstance(value, tuple | list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, pd.DataFrame):
        return plain(value.to_dict("records"))
    return value  # type: ignore[return-value]


def laid_out(
    record: object, keys: dict[str, Key], where: str, *, own: bool = False
) -> dict[str, JSON]:
    """``keys`` over ``record`` (``where`` in the data file), after its ``own`` fields that
    ``keys`` neither names nor reads by a path."""
    paths = [how[0] if isinstance(how, list) else how for how in keys.values()]
    read = {*keys, *(path.split(".")[0] for path in paths if isinstance(path, str))}
    named = [f.name for f in fields(record)] if own else []  # type: ignore[arg-type]
    found = {name: plain(getattr(record, name)) for name in named if name not in read}
    for key, how in keys.items():
        if isinstance(how, list):
            inner = _read(record, how[0])
            found.update(dict.fromkeys(how[1:]) if inner is None else plain(inner))
        elif isinstance(how, dict):
            found[key] = laid_out(record, how, f"{where}.{key}")
        elif how == "=":
            found[key] = plain(DERIVED[f"{where}.{key}"](record))
        elif how is not None:
            found[key] = plain(_read(record, how))
    unset = (None, [], {})
    return {k: v for k, v in found.items() if k not in UNSET_LEFT_OUT or v not in unset}


def _read(record: object, path: str) -> object:
    for name in path.split("."):
        record = None if record is None else getattr(record, name)
    return record


def _named(found: tuple[object, ...] | None, *names: str) -> dict[str, object] | None:
    return None if found is None else dict(zip(names, found, strict=True))


def _by_devices(check: MemoryCheck) -> dict[str, object] | None:
    """The activations counted at one device's micro-batch and at each count's."""
    counted = check.activations_counted
    if counted is None:
        return None
    by_devices = [
        {"devices": n, "micro_batch": a.micro_batch, "total_gb": a.total_gb}
        for n, a in check.activations_by_count
    ]
    # the check says the activations' source (``activations_source``)
    return {**_without(plain(counted), "source"), "by_devices": by_devices}


def _without(found: JSON, *keys: str) -> dict[str, JSON]:
    return {key: value for key, value in found.items() if key not in keys}  # type: ignore[union-attr]


def _shape(cal: Calibration) -> dict[str, JSON] | None:
    """The transformer's shape advised on (None: none given), what it gives, and the
    activations one device holds (None: its memory unknown)."""
    kind = FindingKind.TRANSFORMER_SHAPE
    found = next((f for f in cal.said.sources if isinstance(f, Finding) and f.kind is kind), None)
    if found is None:
        return None
    words, renamed = SHAPE["words_only"], SHAPE["renamed"]
    values = {renamed.get(k, k): v for k, v in found.values if k not in words}
    held = getattr(cal.machine.memory, "activations_counted", None)  # None: memory unknown
    # the shape says its sequence and layers
    activations = maybe(lambda a: _without(plain(a), "seq_len", "layers"), held)
    return {**values, "source": values["source"] or None, "activations": activations}


def _terms_evidence(advice: AdviceView) -> str | None:
    """What the step's terms rest on: "flagged", "weak" or "firm" runs (None: numbers)."""
    found = advice.calibration.runs.evidence
    if found is None:
        return None
    return "flagged" if found.untrusted else ("weak" if found.weak else "firm")


# the keys derived by a function of their record or of the advice ("=" in the data file)
DERIVED: dict[str, Callable[..., object]] = {
    "Quantity.at": lambda q: dict(q.at),
    "Assumption.said": lambda a: said(a.value),
    "Assumption.basis": lambda a: said(a.basis),
    "FixedCost.basis": lambda f: said(f.basis),
    "MemoryCheck.device_assumed": lambda m: m.device.assumed or None,
    "MemoryCheck.activations_counted": _by_devices,
    "MemoryCheck.fewest_devices": lambda m: dict(m.fewest),
    "MemoryCheck.fits_from": lambda m: {s: m.fits_from(s) for s in STRATEGIES},
    "MemoryCheck.fallback": lambda m: _named(m.fallback, "strategy", "devices"),
    "MeasuredCount.trusted_runs": lambda c: c.of(c.trusted),
    # (ms, ms per million parameters)
    "FamilyBasis.optimizer_ms": lambda f: _named(f.opt_ms, "fixed", "per_mparam"),
    "FamilyBasis.ddp_ms": lambda f: _named(f.ddp_ms, "fixed", "per_mparam"),
    "disagreement.evidence.trusted_runs": lambda c: c.of(c.used),
    "disagreement.evidence.left_out": lambda c: c.of(c.left_out),
    # this model beside the break-even (``derived.BreakEven``), less the keys said before it
    "document.recommendation.break_even_this_model": lambda a: _without(
        plain(a.break_even), "compute_ms_per_grad_mb", "params", "target_efficiency_params"
    ),
    "document.recommendation.model": lambda a: said(a.calibration.model.name),
    # every assumed term whose range moves the count (``withheld_by``: the first)
    "document.recommendation.moved_by": lambda a: moved_by(a.decision),
    "document.recommendation.terms_evidence": _terms_evidence,
    "document.disagreements": lambda a: [
        laid_out(found, DISAGREEMENT, "disagreement") for found in a.disagreements
    ],
    "document.shape": lambda a: _shape(a.calibration),
    "document.scaling.kind": lambda a: scaling(a.calibration),
    "document.scaling.fixed_cost": lambda a: maybe(
        lambda f: {**plain(f), "optimizer_ms": a.fixed_term.optimizer_ms}, a.calibration.model.fixed
    ),
    "document.answer": lines,  # the default view's lines, before its table
    # --price is in any currency
    "document.cost_unit": lambda a: maybe(
        lambda _: sentence("cost_unit"), a.calibration.search.price_per_device_hour
    ),
}


def advice_document(result: AdviceView) -> dict[str, JSON]:
    """``advise -f json``: the recommendation, the decision's fields, how the counts were
    compared, every assumption, the explanation and the predictions (records)."""
    return laid_out(result, _KEYS["document"], "document")
