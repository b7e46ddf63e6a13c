"""Intervals drawn as bands: one look for every figure's predicted range."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from gpuscale.report.style import OKABE_ITO


def interval_band(
    ax: Axes, frame: pd.DataFrame, x: str, y: str, *, alpha: float, label: str = "80% interval"
) -> None:
    """Shade ``frame[y + "_low"]`` to ``frame[y + "_high"]`` against ``frame[x]`` in the
    first colour, without an edge (the prediction's line is drawn over it)."""
    ax.fill_between(
        frame[x],
        frame[f"{y}_low"],
        frame[f"{y}_high"],
        color=OKABE_ITO[0],
        alpha=alpha,
        linewidth=0,
        label=label,
    )


def error_bars(value: pd.Series, low: pd.Series, high: pd.Series) -> np.ndarray:
    """Matplotlib's ``yerr`` for intervals ``low .. high`` around ``value``: the lengths
    below and above, 0 where an end is unknown, and never negative (an interval that
    does not hold its value, which the analysis does not give, draws a bar ending at the
    value instead of stopping the figure: matplotlib refuses negative lengths)."""
    below = np.asarray(value, float) - np.asarray(low, float)
    above = np.asarray(high, float) - np.asarray(value, float)
    return np.clip(np.nan_to_num(np.vstack([below, above]), nan=0.0), 0.0, None)


def interval_bars(
    ax: Axes, frame: pd.DataFrame, x: str, y: str, *, low: str, high: str, **style: object
) -> None:
    """``frame[y]`` against ``frame[x]`` with bars from ``frame[low]`` to ``frame[high]``
    (:func:`error_bars`: never negative), drawn with matplotlib's ``errorbar`` ``style``."""
    bars = error_bars(frame[y], frame[low], frame[high])
    ax.errorbar(frame[x], frame[y], yerr=bars, **style)  # type: ignore[arg-type]
