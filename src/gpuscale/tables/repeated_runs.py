"""Runs a result publishes twice: two of its result files with the same start and stop
time to the millisecond (v4.0 Sustainable Metal Cloud's 1xSMC DLRM DCNv2: ``..._06.txt``
and ``..._raw_06.txt``, five runs each published twice; v4.1 tinycorp's tinybox_green
BERT: ``result_3`` and ``result_8``, alike but for the seed). The official summarizer
scores every file, so the score stands as MLCommons publishes it; ``scores.repeated_runs``
counts them and the result gets a ``fewer runs`` problem row and a note wherever it is
scored (``gpuscale scores``) or analysed (``gpuscale analyze``). Analyses keep such a
result, as they keep one scored from fewer result files than the rules require: its runs
are its own, its time a measurement of its system, averaged over fewer distinct runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpuscale.quantities import agreeing, number

if TYPE_CHECKING:
    import pandas as pd

REPEATED = "repeated_runs"  # the scores column


def repeated_count(times: Iterable[tuple[object, object]]) -> int:
    """How many of some runs' (start, stop) times repeat an earlier run's (a run missing
    either time repeats none)."""
    seen: set[tuple[float, float]] = set()
    repeats = 0
    for start, stop in times:
        if not isinstance(start, int | float) or not isinstance(stop, int | float):
            continue
        if start != start or stop != stop:  # NaN: not logged
            continue
        repeats += (float(start), float(stop)) in seen
        seen.add((float(start), float(stop)))
    return repeats


def repeated_said(repeated: int, runs: int, required: object) -> str:
    """What ``repeated`` runs of a result of ``runs`` (the rules requiring ``required``,
    None where they name no count) mean for its score."""
    distinct = runs - repeated
    said = (
        f"{number(repeated)} of its runs {agreeing(repeated, 'repeats', 'repeat')} another run "
        "of the result (same start and stop times): "
    )
    if isinstance(required, int | float) and required == required and distinct < required:
        return said + (
            "the score averages fewer distinct runs than the rules require "
            f"({number(distinct)} distinct, {number(int(required))} required)"
        )
    return said + "the score may average one run twice"


def repeated_notes(scores: pd.DataFrame, then: str = "") -> list[str]:
    """A note per result of ``scores`` with repeated runs: ``ROUND ORG/SYSTEM BENCHMARK:``
    then :func:`repeated_said`, and ``then``."""
    if REPEATED not in scores:
        return []
    counts = scores[REPEATED].fillna(0).astype(int)
    out = []
    for row, count in zip(scores.itertuples(index=False), counts, strict=True):
        if count > 0:
            out.append(
                f"{row.round} {row.org}/{row.system_id} {row.benchmark}: "
                + repeated_said(count, int(row.runs), row.runs_required)
                + then
            )
    return out
