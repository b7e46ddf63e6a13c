"""From the step model and the convergence model to a recommendation: how many devices,
with what per-device batch and gradient accumulation, the break-even, time, cost and
energy to a trained model.

The predictions (``predict``), then in a row: the measured counts that disagree with
them and the rows resting on those measurements, the decision and its readings at the
ends of every assumed term's range, the break-even and the equilibrium picks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import pandas as pd

from gpuscale.advice.assumptions import Assumption
from gpuscale.advice.inputs import AdviceInputs, Calibrated
from gpuscale.advice.model.priors import FEW_NOISE_STEPS
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.search.break_even import break_even
from gpuscale.advice.search.decision import (
    applied,
    below_mlperf,
    decide,
    disagreements,
    equilibrium,
    plausible,
    read,
    with_readings,
)
from gpuscale.advice.search.predict import predictions
from gpuscale.advice.types import Decision, Disagreement, End


@dataclass(frozen=True)
class Advice:
    """The predictions, the one :class:`Decision` read off them and what qualifies it, as
    data; the words (``decision``'s warnings and what to measure first, ``caveats``,
    ``explanation``, ``str``) are rendered from them when read
    (``advice/explain/caveats.py``), never stored by the search."""

    # one row per device count (see ``predictions``), its flags as data (``FLAGGED``):
    # ``predictions`` says them
    table: pd.DataFrame
    decided: Decision  # as the search decided it (``decision``: with its words)
    efficient: int | None  # largest count with efficiency >= target
    cheapest: int | None
    equilibrium: dict[str, int | None]
    break_even_ms_per_mb: float | None  # step compute per MB of gradients
    break_even_params: float | None
    target_params: float | None
    inputs: AdviceInputs | None = None
    # strong scaling decided: the same counts keeping the per-device batch (weak), whose
    # gain rests on the samples a larger global batch needs
    weak_table: pd.DataFrame | None = None  # ``alternative``, its flags as data
    # counts whose measured runs fall outside the predicted interval: their rows rest on
    # the measurement (``decision.applied``), said first
    disagreements: tuple[Disagreement, ...] = ()
    # (count, predicted minutes, the fastest MLPerf system's floor, that system) of each
    # count predicted faster than MLPerf allows: an input that cannot be true
    below_mlperf: tuple[tuple[int, float, float, str], ...] = ()
    # what qualifies the headline: the options the times rest on that were never given
    # ("samples", "batch", "link"), the steps of a noise scale measured over too few,
    # another model than the largest advised on (said first), which benched model was
    # advised on (said after the decision)
    defaults: tuple[str, ...] = ()
    # the input pipeline: the samples/s the largest count predicted consumes, and that
    # count (``assumptions`` says it in the input pipeline's term)
    input_rate: tuple[float, int] | None = None
    noise_steps: int | None = None
    model_note: str = ""
    chosen: str = ""

    def __str__(self) -> str:
        """The advice as ``gpuscale advise`` says it (``print(advice)``; the fields, and
        every number, are the dataclass's: ``repr``)."""
        return "\n".join(f"- {line}" for line in self.explanation)

    @cached_property
    def predictions(self) -> pd.DataFrame:
        """The predictions table (``tables.advice``): ``table`` with its flags said."""
        # lazy: the words render this advice and import its module (a cycle at the top)
        from gpuscale.advice.explain.caveats import flagged

        return flagged(self.table)

    @cached_property
    def alternative(self) -> pd.DataFrame | None:
        """The weak-scaling alternative (``weak_table``) with its flags said."""
        # lazy: the words render this advice and import its module (a cycle at the top)
        from gpuscale.advice.explain.caveats import flagged

        return None if self.weak_table is None else flagged(self.weak_table)

    @cached_property
    def assumptions(self) -> tuple[Assumption, ...]:
        """The inputs' assumptions, the input pipeline's saying ``input_rate``."""
        # lazy: the words render this advice and import its module (a cycle at the top)
        from gpuscale.advice.explain.caveats import assumed

        return assumed(self)

    @cached_property
    def decision(self) -> Decision:
        """``decided`` with its words (the warnings, what to measure first)."""
        # lazy: the words render this advice and import its module (a cycle at the top)
        from gpuscale.advice.explain.caveats import render_decision

        return render_decision(self)

    @cached_property
    def caveats(self) -> tuple[str, ...]:
        """What makes the headline less firm, and measurements beside the prediction:
        also the explanation's first lines."""
        # lazy: the words render this advice and import its module (a cycle at the top)
        from gpuscale.advice.explain.caveats import caveats

        return caveats(self)

    @cached_property
    def explanation(self) -> list[str]:
        # lazy: the words render this advice and import its module (a cycle at the top)
        from gpuscale.advice.explain.caveats import explanation

        return explanation(self)

    @property
    def recommended(self) -> int:
        return self.decided.accelerators

    @property
    def fastest(self) -> int:
        return self.decided.fastest

    @property
    def dominant_term(self) -> str:
        return self.decided.dominant_term

    @property
    def cap(self) -> str:
        return self.decided.cap

    @property
    def decision_line(self) -> int:
        """Where "Use N devices ..." stands in ``explanation``: after what qualifies it
        (``caveats``, said first) and the decision's warnings (``explain`` says them
        before it)."""
        return len(self.caveats) + len(self.decision.warnings)


def recommend(inputs: AdviceInputs, ends: Sequence[End] = ()) -> Advice:
    """Predictions and the Decision for one model on one network, with the count at each
    of the ``ends`` of every assumed term's range (``decision.read``: where one moves it,
    the count is withheld)."""
    multi = inputs.max_devices >= 2 and inputs.global_batch is None
    weak = multi and inputs.kept_global_batch is not None and inputs.convergence is None
    frame = predictions(inputs)
    # where the global batch is kept without a convergence model: the same counts keeping
    # the per-device batch (the weak-scaling alternative)
    alternative = predictions(replace(inputs, scaling="weak")) if weak else None
    # a count the bench measured outside the predicted interval rests on the measurement
    found = disagreements(frame, inputs.measured, alternative)
    counts = {m.devices for m in inputs.measured}  # measured counts: as said
    frame = applied(frame, found, counts)
    alternative = applied(alternative, found, counts)
    below = below_mlperf(frame, inputs.mlperf_floor)  # each an input that cannot be true
    refused = inputs.implausible or bool(below)
    decision = decide(frame, inputs.target_efficiency, inputs.warnings, refused)

    def decide_at(changes: dict[str, object]) -> Decision:
        at = replace(inputs, **changes)
        table = applied(predictions(at), found, counts)
        return decide(table, at.target_efficiency, at.warnings, at.implausible)

    decision = with_readings(decision, read(ends, decide_at))
    trusted = frame[plausible(frame)]
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
        efficient=efficient,
        cheapest=cheapest,
        equilibrium=picks,
        break_even_ms_per_mb=ms_per_mb,
        break_even_params=params,
        target_params=target,
        inputs=inputs,
        weak_table=alternative,
        disagreements=found,
        below_mlperf=below,
        input_rate=(float(last.samples_per_s), int(last.accelerators)),
    )


def search(calibrated: Calibrated, request: AdviceRequest) -> Advice:
    """The advice on ``calibrated``'s inputs: predictions, decision, the count at each
    end of every assumed term's range (``decision.read``; where one moves it, the count
    is withheld and said first), and what qualifies the headline, as data."""
    advice = recommend(calibrated.inputs, calibrated.ends)
    defaults = (
        *(["samples"] if request.samples is None and calibrated.samples_used else []),
        *(
            ["batch"]
            if not calibrated.from_bench and request.step_ms is not None and request.batch is None
            else []
        ),
        *(["link"] if calibrated.link_assumed else []),
    )
    few = calibrated.noise_steps
    return replace(
        advice,
        defaults=defaults,
        noise_steps=few if few is not None and few < FEW_NOISE_STEPS else None,
        model_note=calibrated.model_note,
        chosen=calibrated.chosen,
    )
