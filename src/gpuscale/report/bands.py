"""Intervals drawn as bands: one look for every figure's predicted range."""

from __future__ import annotations

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
