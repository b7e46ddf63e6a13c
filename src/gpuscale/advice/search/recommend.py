"""From the step model and the convergence model to a recommendation: how many devices,
with what per-device batch and gradient accumulation, the break-even, time, cost and
energy to a trained model.

The predictions table and its intervals: ``search/predictions.py``; then the measured
counts that disagree with it, the decision and its readings at the ends of every assumed
term's range, the equilibrium picks and the break-even.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import pandas as pd

from gpuscale.advice.assumptions import Assumption
from gpuscale.advice.explain import caveats as words
from gpuscale.advice.explain import memory as memory_words
from gpuscale.advice.inputs import AdviceInputs, Calibrated
from gpuscale.advice.measured_runs import MeasuredCount
from gpuscale.advice.memory import MemoryCheck
from gpuscale.advice.model.priors import FEW_NOISE_STEPS
from gpuscale.advice.records import BreakEven, Decision, Picks, Qualifiers
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.search import intervals
from gpuscale.advice.search.break_even import break_even, equilibrium
from gpuscale.advice.search.decision import (
    applied,
    below_mlperf,
    decide,
    disagreements,
    measured_counts,
    plausible,
)
from gpuscale.advice.search.predictions import predictions
from gpuscale.advice.types import Disagreement, End, Finding, Reading, maybe
from gpuscale.tables.requests import NamedError


@dataclass(frozen=True)
class Advice:
    """The predictions, the one :class:`Decision` read off them and what qualifies it, as
    data; the words are rendered from them when read (``advice/explain/caveats.py``)."""

    table: pd.DataFrame  # one row per device count, its flags as data (``FLAGGED``)
    decided: Decision  # as the search decided it (``decision``: with its words)
    picks: Picks  # the counts other rules pick
    break_even: BreakEven
    inputs: AdviceInputs
    # strong scaling decided: the same counts keeping the per-device batch (weak)
    weak_table: pd.DataFrame | None = None  # ``alternative``, its flags as data
    # counts whose measured runs fall outside the predicted interval (``decision.applied``)
    disagreements: tuple[Disagreement, ...] = ()
    # every count measured in a configuration predicted (``decision.measured_counts``)
    measured_counts: tuple[MeasuredCount, ...] = ()
    # (count, predicted minutes, MLPerf's floor, its system) of each count predicted
    # faster than MLPerf allows: an input that cannot be true
    below_mlperf: tuple[tuple[int, float, float, str], ...] = ()
    qualifiers: Qualifiers = field(default_factory=Qualifiers)
    # the input pipeline: the samples/s the largest count predicted consumes, and that count
    input_rate: tuple[float, int] | None = None
    # what each device holds per count and strategy, where memory limits the counts
    memory: MemoryCheck | None = None
    interval: Finding | None = None  # the link class's calibrated rule (None: the model's)

    def __str__(self) -> str:
        """The advice as ``gpuscale advise`` says it."""
        return "\n".join(f"- {line}" for line in self.explanation)

    @cached_property
    def predictions(self) -> pd.DataFrame:
        """The predictions table (``tables.advice``): ``table`` with its flags said."""
        return words.flagged(self.table)

    @cached_property
    def alternative(self) -> pd.DataFrame | None:
        """The weak-scaling alternative (``weak_table``) with its flags said."""
        return maybe(words.flagged, self.weak_table)

    @cached_property
    def assumptions(self) -> tuple[Assumption, ...]:
        """The inputs' assumptions, the input pipeline's saying ``input_rate``."""
        return words.assumed(self)

    @cached_property
    def decision(self) -> Decision:
        """``decided`` with its words (the warnings, what to measure first)."""
        return words.render_decision(self)

    @cached_property
    def caveats(self) -> tuple[str, ...]:
        """What makes the headline less firm: the explanation's first lines."""
        return words.caveats(self)

    @cached_property
    def explanation(self) -> list[str]:
        return words.explanation(self)

    @property
    def recommended(self) -> int | None:
        """The count advised: the decision's ``count`` (None where an assumed term's range
        moves it: ``decision.withheld_by``)."""
        return self.decided.count

    @property
    def decision_line(self) -> int:
        """Where "Use N devices ..." stands in ``explanation``: after the ``caveats`` and
        the decision's warnings."""
        return len(self.caveats) + len(self.decision.warnings)


def read(
    ends: Sequence[End],
    decide_at: Callable[[dict[str, object]], Decision],
) -> tuple[Reading, ...]:
    """The count and its speedup at each end of every assumed term's range (``decide_at``:
    the decision of a basis): where the count chosen moves, ``with_readings`` withholds it
    (``Decision.withheld_by``), the one thing to give or measure leading the answer."""
    found = []
    for term, end, value, unit, basis in ends:
        d = decide_at(basis)
        found.append(
            Reading(term, end, float(value), unit, d.chosen.accelerators, d.chosen.speedup)
        )
    return tuple(found)


def with_readings(decision: Decision, readings: tuple[Reading, ...]) -> Decision:
    """``decision`` with its readings and the first term whose range moves the count."""
    moved = next((r.term for r in readings if r.accelerators != decision.chosen.accelerators), None)
    return replace(decision, readings=readings, withheld_by=moved)


def recommend(
    inputs: AdviceInputs,
    ends: Sequence[End] = (),
    fits_from: int = 1,
    rule: intervals.IntervalRule | None = None,
) -> Advice:
    """Predictions and the Decision for one model on one network, with the count at each
    of the ``ends`` of every assumed term's range (``read``); no count below
    ``fits_from`` (the fewest devices that hold the model) is chosen, efficient or
    cheapest. ``rule``: the speedup's interval per link class (None: the model's own)."""
    multi = inputs.max_devices >= 2 and inputs.global_batch is None
    # the global batch kept without a convergence model: the weak-scaling alternative too
    weak = multi and inputs.kept_global_batch is not None and inputs.convergence is None
    frame = predictions(inputs, rule)
    alternative = predictions(replace(inputs, scaling="weak"), rule) if weak else None
    # a count the bench measured outside the predicted interval rests on the measurement
    measured = measured_counts(frame, inputs.measured, alternative)  # what every view says
    found = disagreements(measured)
    counts = {m.devices for m in inputs.measured}  # measured counts: as said
    frame = applied(frame, found, counts)
    alternative = applied(alternative, found, counts)
    below = below_mlperf(frame, inputs.mlperf_floor)  # each an input that cannot be true
    refused = inputs.implausible or bool(below)
    searched = inputs.device_counts  # why none above the largest predicted: the cap
    decision = decide(
        frame, inputs.target_efficiency, inputs.warnings, refused, searched, fits_from
    )

    def decide_at(changes: dict[str, object]) -> Decision:
        at = replace(inputs, **changes)
        table = applied(predictions(at, rule), found, counts)
        return decide(
            table, at.target_efficiency, at.warnings, at.implausible, at.device_counts, fits_from
        )

    decision = with_readings(decision, read(ends, decide_at))
    trusted = frame[plausible(frame)]
    fitting = trusted[trusted["accelerators"] >= fits_from]
    trusted = fitting if len(fitting) else trusted  # none predicted holds it: ``decide``'s rule
    picks = equilibrium(trusted, inputs.threshold)
    ms_per_mb, params, target = break_even(inputs) if multi else (None, None, None)
    last = frame.iloc[-1]  # the input pipeline: the samples/s the largest count needs
    ok = trusted[trusted["efficiency"] >= inputs.target_efficiency]
    efficient = int(ok["accelerators"].max()) if len(ok) else None
    cheapest = None
    if trusted["accelerator_hours"].notna().any():
        cheapest = int(trusted.loc[trusted["accelerator_hours"].idxmin(), "accelerators"])
    return Advice(
        table=frame,
        decided=decision,
        picks=Picks(efficient, cheapest, picks),
        break_even=BreakEven(ms_per_mb, params, target),
        inputs=inputs,
        weak_table=alternative,
        disagreements=found,
        measured_counts=measured,
        below_mlperf=below,
        input_rate=(float(last.samples_per_s), int(last.accelerators)),
        interval=None if rule is None else rule.said(inputs.network, list(frame["accelerators"])),
    )


def search(calibrated: Calibrated, request: AdviceRequest) -> Advice:
    """The advice on ``calibrated``'s inputs (``recommend``) and what qualifies the
    headline, as data."""
    inputs, fits_from, memory = held(calibrated)
    rule = intervals.rule_for(calibrated)
    advice = recommend(inputs, calibrated.ends, fits_from, rule)
    one_step = request.step_ms is not None and request.batch is None  # the batch defaulted
    defaulted = {
        "samples": request.samples is None and calibrated.samples_used,
        "batch": one_step and not calibrated.from_bench,
        "link": calibrated.link_assumed,
    }
    defaults = tuple(name for name, taken in defaulted.items() if taken)
    few = calibrated.noise_steps
    qualifiers = Qualifiers(
        defaults=defaults,
        noise_steps=few if few is not None and few < FEW_NOISE_STEPS else None,
        model_note=calibrated.model_note,
        model_chosen=calibrated.chosen,
    )
    return replace(advice, qualifiers=qualifiers, memory=memory)


def held(calibrated: Calibrated) -> tuple[AdviceInputs, int, MemoryCheck | None]:
    """(the inputs, the fewest devices that hold the model, the memory check where it
    limits the counts): the strategy asked where a count searched holds the model, else
    ``MemoryCheck.fallback``'s; a ``NamedError`` where no strategy holds it."""
    inputs, memory = calibrated.inputs, calibrated.memory
    if memory is None or not memory.limits:
        return inputs, 1, None
    asked = memory.fits_from(memory.strategy)
    if asked is not None:
        return inputs, asked, memory
    if memory.fallback is None:
        raise NamedError(memory_words.nothing_fits(memory))
    strategy, fewest = memory.fallback
    return replace(inputs, strategy=strategy), fewest, memory
