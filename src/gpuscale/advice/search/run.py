"""The search, once: ``search(calibrated, request)`` -> :class:`Advice`.

In a row: the predictions and the decision (``recommend``), what qualifies the headline
(``caveats.qualify``), the count at each end of every assumed term's range (where one
moves it, the count is withheld and said first), and the note on which model was advised
on."""

from __future__ import annotations

from dataclasses import replace

from gpuscale.advice.inputs import Calibrated
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.search import caveats
from gpuscale.advice.search import decision as readings
from gpuscale.advice.search.decision import decide
from gpuscale.advice.search.derive import applied
from gpuscale.advice.search.recommend import Advice, predictions, recommend
from gpuscale.advice.types import Decision


def search(calibrated: Calibrated, request: AdviceRequest) -> Advice:
    """The advice on ``calibrated``'s inputs: predictions, decision, the count at each
    end of every assumed term's range (``decision.readings``; where one moves it, the
    count is withheld and said first), the caveats said first."""
    inputs = calibrated.inputs
    advice = caveats.qualify(
        recommend(inputs),
        request,
        samples_used=calibrated.samples_used,
        noise_steps=calibrated.noise_steps,
        link_assumed=calibrated.link_assumed,
        from_bench=calibrated.from_bench,
    )
    counts = {m.devices for m in inputs.measured}  # measured counts: as said

    def decide_at(changes: dict[str, object]) -> Decision:
        at = replace(inputs, **changes)
        frame = applied(predictions(at), advice.disagreements, counts)
        return decide(frame, at.target_efficiency, at.warnings, at.implausible)

    decision = readings.with_readings(advice.decision, readings.read(calibrated.ends, decide_at))
    first = tuple(filter(None, (calibrated.model_note, readings.withheld(decision))))
    advice = replace(
        advice,
        decision=decision,
        caveats=(*first, *advice.caveats),
        explanation=[*first, *advice.explanation],
    )
    if not calibrated.chosen or calibrated.model_note:
        return advice
    lines, at = advice.explanation, advice.decision_line  # said after the decision
    return replace(advice, explanation=[*lines[: at + 1], calibrated.chosen, *lines[at + 1 :]])
