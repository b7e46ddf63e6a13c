"""The equilibrium criteria on plain lists: Kneedle gives ``kneed``'s knee on every curve
(a differential test against the library it replaces on the hot path)."""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.criteria import (
    best_speed_x_efficiency,
    kneedle,
    last_above_threshold,
    pareto_mask,
)


def kneed_index(x: list[float], y: list[float]) -> int | None:
    from kneed import KneeLocator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kneed warns when it finds no knee
        knee = KneeLocator(x, y, curve="convex", direction="decreasing").knee
    return None if knee is None else int(np.argmin(np.abs(np.array(x) - knee)))


@st.composite
def curves(draw) -> tuple[list[float], list[float]]:
    """Strictly increasing x; y anything from a clean decreasing curve to noise."""
    steps = draw(st.lists(st.floats(0.05, 1.0), min_size=2, max_size=12))
    x = np.cumsum([0.0, *steps]).tolist()
    kind = draw(st.sampled_from(["decreasing", "any"]))
    drops = draw(st.lists(st.floats(0.0, 2.0), min_size=len(x), max_size=len(x)))
    y = (-np.cumsum(drops)).tolist() if kind == "decreasing" else [d - 1.0 for d in drops]
    return x, y


@settings(max_examples=400, deadline=None)
@given(curves())
def test_kneedle_finds_kneeds_knee(curve: tuple[list[float], list[float]]) -> None:
    x, y = curve
    if min(y) == max(y):  # kneed divides by zero there; ours says no knee
        assert kneedle(x, y) is None
        return
    assert kneedle(x, y) == kneed_index(x, y)


def test_kneedle_on_a_known_curve() -> None:
    """Time halving to 8 devices, then barely falling: the knee is at 8."""
    n = [1, 2, 4, 8, 16, 32, 64]
    t = [100, 50, 25, 12.5, 11.5, 11.0, 10.8]
    knee = kneedle(np.log10(n).tolist(), np.log10(t).tolist())
    assert knee is not None and n[knee] == 8


def test_the_other_criteria() -> None:
    assert pareto_mask([10, 5, 6, 4], [1, 2, 3, 4]) == [True, True, False, True]
    assert best_speed_x_efficiency([1.0, 1.9, 3.0], [1.0, 0.95, 0.5]) == 1
    assert last_above_threshold([1.0, 0.9, 0.85, 0.7], 0.8) == 2
    assert last_above_threshold([0.5, 1.0, 0.6], 0.8) == 1
