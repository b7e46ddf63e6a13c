"""How wide a plan's 80% interval is before the count's own position widens it: each
count class's prior half-width (``prior_intervals``, fitted on development forecasts),
and the widening for a level resting on few (submitter, round) pairs
(:func:`evidence_factor`) or, for a workload the family never ran, on few other
workloads (:func:`transfer_factor`)."""

from __future__ import annotations

import json
import math
from importlib import resources

from gpuscale.planning.records import FamilyFit, Fits, systems_of

CLASSES = ("i", "ii_in", "ii_out", "iii")
PRIORS_FILE = "plan_priors.json"


def prior_intervals() -> dict[str, float]:
    """Each class's prior 80% half-width (log) and the widening per octave outside:
    fitted on development forecasts no accuracy figure judges (v1.1 from v0.7, v3.0 from
    both; between and beyond, class (i)'s times how far their errors exceed class (i)'s
    in the same round, workload and family: ``benchmarks/plan_priors.py`` writes
    ``data/plan_priors.json``); the
    calibration pools them with the forecasts of the rounds it has
    (``gpuscale.planning.calibrate.pooled``)."""
    stored = json.loads((resources.files("gpuscale") / "data" / PRIORS_FILE).read_text())
    return {key: float(stored[key]) for key in (*CLASSES, "widen")}


DEFAULT_INTERVALS = prior_intervals()
# An interval widens by sqrt(1 + prior / e), ``e`` the (submitter, round) pairs of the
# family's results on the workload, ``prior`` calibrated per class (``calibrate``) among
# EVIDENCE_PRIORS; EVIDENCE_PRIOR where too few forecasts tell (the forward backtest:
# class (i) forecasts of families with 1-2 such pairs erred 2x as far as with many).
EVIDENCE_PRIORS = (0.0, 0.5, 1.0, 2.0, 4.0, 8.0)
EVIDENCE_PRIOR = 1.0


def evidence(family: FamilyFit | None) -> dict[str, int]:
    """What the family's level on the workload rests on: its ``results``, ``submitters``,
    ``rounds`` and (submitter, round) ``pairs`` (all 0 for a family that never ran it)."""
    systems = systems_of(family)
    return {
        "results": len(systems),
        "submitters": len({s[1] for s in systems}),
        "rounds": len({s[0] for s in systems}),
        "pairs": len({(s[1], s[0]) for s in systems}),
    }


def evidence_factor(pairs: int, prior: float) -> float:
    """``sqrt(1 + prior / pairs)``: an interval's widening for a level resting on
    ``pairs`` (submitter, round) pairs (1 where none; class (iii): :func:`transfer_factor`)."""
    return math.sqrt(1 + prior / pairs) if pairs else 1.0


def transfer_factor(fits: Fits, family_name: str) -> tuple[int, float]:
    """(``k``, the workloads ``family_name``'s speed rests on; the widening of a class (iii)
    interval for them): ``sqrt(1 + 1 / k)``, the spread of a level from the mean of ``k``
    workloads against one from many (``fits.transfer``); on one workload at least the
    in-sample spread of a level from one other workload against that from many
    (``one / spread``), the floor of a transfer resting on one workload."""
    k = sum(family_name in w["families"] for w in fits["workloads"].values())
    if k == 0:
        return 0, 1.0
    factor = math.sqrt(1 + 1 / k)
    spread = (fits["speed"].get("transfer") or {}).get("spread", math.nan)
    if k == 1 and spread > 0:  # NaN: too few pairs held out to say
        factor = max(factor, fits["speed"]["transfer"]["one"] / spread)
    return k, factor
