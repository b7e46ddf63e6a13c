"""From the calibration to the advice in one pass (``recommend``): the predictions with
their intervals (``predictions.py``), reconciled with the measurements (``reconcile.py``),
the decision (``decision.py``) and the break-even (``break_even.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import pandas as pd

from gpuscale.advice.assumptions import Assumption
from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain import caveats as words
from gpuscale.advice.explain.qualifiers import nothing_fits
from gpuscale.advice.measured_runs import Disagreement, MeasuredCount
from gpuscale.advice.memory import MemoryCheck
from gpuscale.advice.model.priors import FEW_NOISE_STEPS
from gpuscale.advice.records import (
    BreakEven,
    Decision,
    FixedTerm,
    InputRate,
    OneDeviceRow,
    Picks,
    Qualifiers,
    RowIntervals,
)
from gpuscale.advice.search import decision, intervals, reconcile
from gpuscale.advice.search.break_even import break_even
from gpuscale.advice.search.derive import fixed_term, one_device_row, row_intervals
from gpuscale.advice.search.predictions import predicted
from gpuscale.advice.types import maybe
from gpuscale.tables.requests import NamedError


@dataclass(frozen=True)
class Advice:
    """The predictions, the one :class:`Decision` read off them and what qualifies it, as
    data; the words are rendered from them when read (``advice/explain/caveats.py``)."""

    table: pd.DataFrame  # one row per device count, its flags as data
    decided: Decision
    picks: Picks  # the counts other rules pick
    break_even: BreakEven
    calibration: Calibration  # what it was computed from
    weak_table: pd.DataFrame | None = None  # strong scaling's weak-scaling alternative
    disagreements: tuple[Disagreement, ...] = ()
    measured_counts: tuple[MeasuredCount, ...] = ()
    # (count, predicted minutes, MLPerf's floor, its system): inputs that cannot be true
    below_mlperf: tuple[tuple[int, float, float, str], ...] = ()
    qualifiers: Qualifiers = field(default_factory=Qualifiers)
    input_rate: InputRate | None = None  # the input pipeline's load at the largest count
    memory: MemoryCheck | None = None
    intervals: RowIntervals = field(default_factory=RowIntervals)  # the rows' and why
    fixed_term: FixedTerm = field(default_factory=FixedTerm)  # at the focus count
    one_device: OneDeviceRow = field(default_factory=OneDeviceRow)  # beside the bench's N = 1

    def __str__(self) -> str:
        """The advice as ``gpuscale advise`` says it."""
        return "\n".join(f"- {line}" for line in self.explanation)

    @cached_property
    def predictions(self) -> pd.DataFrame:
        """``table`` with its flags said (``tables.advice``)."""
        return words.flagged(self.table)

    @cached_property
    def alternative(self) -> pd.DataFrame | None:
        """``weak_table`` with its flags said."""
        return maybe(words.flagged, self.weak_table)

    @cached_property
    def assumptions(self) -> tuple[Assumption, ...]:
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
        """The count advised (None where an assumed term's range moves it)."""
        return self.decided.count

    @property
    def decision_line(self) -> int:
        """Where "Use N devices ..." stands in ``explanation``."""
        return len(self.caveats) + len(self.decision.warnings)


# the record's change for the weak-scaling alternative: the per-device batch kept
WEAK = {"run": {"scaling": "weak"}}


def search(cal: Calibration) -> Advice:
    """The advice on ``cal`` (the speedup's interval its link class's calibrated rule where
    it is the advice's) and what qualifies the headline."""
    advice = recommend(cal, intervals.RULE)
    few = cal.search.noise_steps
    qualifiers = Qualifiers(
        defaults=cal.search.defaults,
        noise_steps=few if few is not None and few < FEW_NOISE_STEPS else None,
        model_note=cal.said.model_note,
        model_chosen=cal.said.chosen,
    )
    return replace(advice, qualifiers=qualifiers)


def recommend(cal: Calibration, rule: intervals.IntervalRule | None = None) -> Advice:
    """Predictions and the Decision for one model on one network: the calibration the
    devices hold (``held``) and its variants (the weak-scaling alternative where the global
    batch is kept without a convergence model, each end of every assumed term's range), each
    predicted, reconciled, decided; no count below the fewest devices that hold the model is
    chosen. ``rule``: the speedup's interval per link class (None: the model's)."""
    cal, fits_from, memory = held(cal)
    run, goal = cal.run, cal.search
    multi = cal.machine.max_devices >= 2 and run.global_batch is None
    # the global batch kept without a convergence model: the weak-scaling alternative too
    weak = multi and run.kept_global_batch is not None and goal.convergence is None
    ends = [cal.at(changes) for *_, changes in goal.ends]
    variants = (cal, *([cal.at(WEAK)] if weak else []), *ends)
    tables, interval = predicted(variants, rule)  # one step table each
    alternative = tables[1] if weak else None
    measured = reconcile.measured_counts(tables[0], cal.runs.measured, alternative)
    found = reconcile.disagreements(measured)
    counts = {m.devices for m in cal.runs.measured}  # measured counts: as said
    frame, *others = [reconcile.applied(table, found, counts) for table in tables]
    alternative = others[0] if weak else None
    below = decision.below_mlperf(frame, goal.mlperf_floor)  # each an input that cannot be true
    at_ends = list(zip(ends, others[len(others) - len(ends) :], strict=True))
    decided = decision.decided(cal, frame, below, at_ends, fits_from)
    picks = decision.picked(frame, fits_from, goal)
    last = frame.iloc[-1]
    return Advice(
        table=frame,
        decided=decided,
        picks=picks,
        break_even=break_even(cal, frame) if multi else BreakEven(),
        calibration=cal,
        weak_table=alternative,
        disagreements=found,
        measured_counts=measured,
        below_mlperf=below,
        input_rate=InputRate(
            float(last.samples_per_s),
            int(last.accelerators),
            float(last.samples_per_s) / int(last.accelerators),
        ),
        memory=memory,
        intervals=row_intervals(cal, frame, interval),
        fixed_term=fixed_term(cal, frame, decided.focus.accelerators),
        one_device=one_device_row(cal, frame),
    )


def held(cal: Calibration) -> tuple[Calibration, int, MemoryCheck | None]:
    """(the calibration, the fewest devices that hold the model, the memory check where it
    limits the counts): the strategy asked where a count searched holds the model, else
    ``MemoryCheck.fallback``'s; a ``NamedError`` where none does."""
    memory = cal.machine.memory
    if memory is None or not memory.limits:
        return cal, 1, None
    asked = memory.fits_from(memory.strategy)
    if asked is not None:
        return cal, asked, memory
    if memory.fallback is None:
        raise NamedError(nothing_fits(memory))
    strategy, fewest = memory.fallback
    return cal.at({"run": {"strategy": strategy}}), fewest, memory
