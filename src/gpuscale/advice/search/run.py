"""The search, once: ``search(calibrated, request)`` -> :class:`Advice`.

In a row: the predictions and the decision (``recommend``), what qualifies the headline
(``caveats.qualify``), the count at each end of every assumed term's range (where one
moves it, the count is withheld and said first), and the note on which model was advised
on."""

from __future__ import annotations

from dataclasses import replace

from gpuscale.advice.inputs import AdviceInputs, Calibrated
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.search import caveats
from gpuscale.advice.search import decision as readings
from gpuscale.advice.search.decision import decide
from gpuscale.advice.search.derive import applied
from gpuscale.advice.search.recommend import Advice, predictions, recommend
from gpuscale.advice.types import Decision


def search(calibrated: Calibrated, request: AdviceRequest) -> Advice:
    """The advice on ``calibrated``'s inputs: predictions, decision, its readings at the
    assumed ends, and the caveats said first."""
    inputs = calibrated.inputs
    advice = caveats.qualify(
        recommend(inputs),
        request,
        noise_steps=calibrated.noise_steps,
        link_assumed=calibrated.link_assumed,
        from_bench=calibrated.from_bench,
    )
    advice = _read_ends(advice, calibrated)
    if calibrated.model_note:  # another model than the largest advised on: said first
        note = calibrated.model_note
        return replace(
            advice, caveats=(note, *advice.caveats), explanation=[note, *advice.explanation]
        )
    if not calibrated.chosen:
        return advice
    lines, at = advice.explanation, advice.decision_line  # said after the decision
    return replace(advice, explanation=[*lines[: at + 1], calibrated.chosen, *lines[at + 1 :]])


def _read_ends(advice: Advice, calibrated: Calibrated) -> Advice:
    """``advice`` with the count at each end of every assumed term's range
    (``decision.readings``); where one moves it, the count is withheld and said first."""

    def decide_at(inputs: AdviceInputs) -> Decision:
        counts = {m.devices for m in inputs.measured}  # measured counts: as said
        frame = applied(predictions(inputs), advice.disagreements, counts)
        return decide(frame, inputs.target_efficiency, inputs.warnings, inputs.implausible)

    found = readings.read(calibrated.ends, decide_at)
    decision = readings.with_readings(advice.decision, found)
    said = readings.withheld(decision)
    advice = replace(advice, decision=decision)
    if not said:
        return advice
    return replace(advice, caveats=(said, *advice.caveats), explanation=[said, *advice.explanation])
