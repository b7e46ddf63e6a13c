"""No confident count from a guess: the count at each end of every assumed term's range.

A term nothing measured (the FLOPs per sample of a model given by its parameters, a fixed
per-step cost, a link assumed) has a range; the advice is computed again at each end
(``ends``) and where the count chosen moves, the count is withheld
(``Decision.withheld_by``): the one thing to give or measure leads the answer, the table
is still shown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from gpuscale.advice.records import Decision
from gpuscale.advice.types import End, Reading


def read(
    ends: Sequence[End],
    decide_at: Callable[[dict[str, object]], Decision],
) -> tuple[Reading, ...]:
    """The count and its speedup at each end (``decide_at``: the decision of a basis)."""
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
