"""How strong one bench row's evidence is: ``strong``, or ``weak`` with the reasons.

A row is not flagged (``gpuscale.plausibility``) yet may rest on little: a few timed
steps (one slow step moves their mean by 1/steps), a spread short of the noisy flag, or a
busy share read over a timed phase too short for the clock it is read from. The host's
CPU time (``/proc/stat``) counts in clock ticks (``SC_CLK_TCK``, 100 per second and core
on Linux), so a phase of a few milliseconds is a handful of ticks and the share of it that
other processes used is not measured: it is said to be unmeasured, never read as 0.

The timed phase lasts ``steps x (synchronised + no-sync step (+ the plain step at
N = 1))``: every kind the worker times runs ``steps`` times between the host samples.
Weak rows stay in the table and the advice; the summary and the advice say they are weak.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

MIN_STEPS = 10  # fewer timed steps: one slow step moves the mean by more than 10%
SPREAD_P95_OVER_P50 = 1.2  # a spread this wide (short of the noisy flag at 1.5x) is weak
MIN_BUSY_WINDOW_S = 1.0  # a busy share needs at least this long a phase (100 ticks a core)


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def timed_window_s(row: Mapping[str, Any]) -> float:
    """Seconds the host's busy share was read over (NaN when the step times are missing)."""
    kinds = [row.get("step_ms_mean"), row.get("nosync_step_ms_mean")]
    plain = row.get("plain_step_ms_mean")
    if _finite(plain):
        kinds.append(plain)
    steps = row.get("steps")
    if not all(_finite(k) for k in kinds) or not _finite(steps):
        return math.nan
    return float(steps) * sum(float(k) for k in kinds) / 1e3


def weak_reasons(row: Mapping[str, Any]) -> list[str]:
    """Why an ``ok`` row is weak evidence (empty: strong)."""
    reasons = []
    steps = row.get("steps")
    if _finite(steps) and steps < MIN_STEPS:
        reasons.append(
            f"only {int(steps)} step(s) timed (under {MIN_STEPS}: one slow step moves the "
            f"mean by 1/{int(steps)}); bench with --steps {MIN_STEPS * 3} or more"
        )
    p50, p95 = row.get("step_ms_p50"), row.get("step_ms_p95")
    if _finite(p50) and _finite(p95) and p50 > 0 and p95 / p50 > SPREAD_P95_OVER_P50:
        reasons.append(f"steps spread: p95 is {p95 / p50:.2f}x the median")
    window = timed_window_s(row)
    if _finite(window) and window < MIN_BUSY_WINDOW_S:
        reasons.append(
            f"busy share not measured: the timed phase lasted {window * 1e3:.3g} ms, "
            f"{max(1, round(window * 100))} clock tick(s) a core (needs "
            f"{MIN_BUSY_WINDOW_S:g} s; more --steps)"
        )
    return reasons


def grade(rows: list[Mapping[str, Any]]) -> tuple[list[str], list[str]]:
    """(``evidence``, ``evidence_notes``) per row: ``strong``/``weak`` for ``ok`` rows
    (``""`` for failed ones) and the reasons ("; "-separated)."""
    grades, notes = [], []
    for row in rows:
        if row.get("status") != "ok":
            grades.append("")
            notes.append("")
            continue
        reasons = weak_reasons(row)
        grades.append("weak" if reasons else "strong")
        notes.append("; ".join(reasons))
    return grades, notes
