"""The plan model's records: plain, JSON-able dicts, so that the fits ship as one file
and a plan writes as ``-f json`` without conversion. Their keys are documented where
each is built; the names here say which record a function takes.

- ``Fits``: every workload's fit and the families' speeds (``fits.fit_all``), cached per
  data version (``cache``).
- ``WorkloadFit``: one workload's fit (``workload.fit_workload``): ``families``,
  ``round``, ``era``, ``rcp``, ``batch_curve``, ``scale`` ...
- ``FamilyFit``: one family's part of a workload's fit (``fit["families"][family]``):
  ``level``, ``shape``, ``round_level``, ``counts``, ``systems`` ...
- ``SystemEntry``: one measured system of a family: ``[round, submitter, system,
  devices, minutes, batch]``.
- ``PlanRow``: one count's row of a plan (``tables.plan.PLAN_COLUMNS`` and the
  intermediate fields the notes read).
- ``PlanResult``: the plan, its rows, notes and facts (``result.plan_for``).
- ``Facts``: a record of named facts (the plan's ``model``, a pair of measured results,
  a verdict): text, numbers, lists and nested records.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, TypeAlias, TypedDict

from gpuscale.tables.json_depth import JSON

FamilyFit: TypeAlias = dict[str, Any]
SystemEntry: TypeAlias = list[str | int | float]
PlanRow: TypeAlias = dict[str, Any]
Facts: TypeAlias = dict[str, Any]


class _Curve(TypedDict):
    log2_n: list[float]
    log2_b: list[float]


class BatchCurve(_Curve, total=False):
    """A global batch per device count, both ``log2`` (``log2_b``: the one planned with);
    a workload's typical batch also keeps the median it was pooled from at each count, how
    many families ran there and the slopes beyond its end counts (``planning.workload``)."""

    log2_b_median: list[float]
    families: list[int]
    end_slopes: list[float] | None


class Rcp(TypedDict):
    """A round's RCP model of a benchmark."""

    e_min: float
    b_noise: float
    source: str


class WorkloadLevels(TypedDict):
    """A workload's fitted parameters (``pooled.levels``)."""

    families: dict[str, FamilyFit]  # each family's level, round_level and shape
    era_level: list[float]  # e, per era
    shape: list[float]  # s at the knots
    batch_slope: float  # c


class _WorkloadLeftOut(TypedDict, total=False):
    """Added to a workload's fit by ``fits.fit_all``."""

    # [round, submitter, system, devices, minutes, family, why] each
    outliers: list[list[JSON]]


class WorkloadFit(_WorkloadLeftOut):
    """One workload's fit (``workload.fit_workload``, whose docstring says each key)."""

    families: dict[str, FamilyFit]
    era_level: list[float]
    shape: list[float]
    batch_slope: float
    workload: str
    benchmark: str
    benchmarks: list[str]
    round: str
    era: dict[str, int]
    reference_batch: float
    rcp: dict[str, Rcp | None] | None
    targets: dict[str, float | None]  # each round's quality target (absent: older fits)
    batch_curve: BatchCurve
    scale: float
    systems: int
    batch_slope_free: float


class _FitsAdded(TypedDict, total=False):
    """Added to the fits by ``calibrate.calibrated_fits`` and ``cache.fits_of``."""

    intervals: Facts  # the half-width per class (``calibrate.intervals``)
    per_node: dict[str, dict[str, int]]  # by family (``systems.node_sizes``)


class Fits(_FitsAdded):
    """Every workload's fit and the families' speeds (``fits.fit_all``)."""

    version: str  # shape.MODEL_VERSION
    workloads: dict[str, WorkloadFit]
    speed: Facts  # fits.speeds


@dataclass(frozen=True, slots=True)
class PlanResult:
    """The plan: ``rows`` (one dict per count, ``PLAN_COLUMNS``), ``notes`` (sentences),
    ``model`` (facts: workload, family, classes, intervals), ``systems`` (the family's
    measured systems of the workload, dicts with ``NEAREST_KEYS``) and ``read_as`` (how
    the names typed were read, the first of ``notes``: what a short answer keeps)."""

    rows: list[PlanRow]
    notes: list[str]
    model: Facts
    systems: list[Facts]
    read_as: tuple[str, ...] = ()
    # what the short answer says besides its rows: rounds pooled, a level borrowed
    said: tuple[str, ...] = ()

    @property
    def timed(self) -> bool:
        """Whether any count has a time to train (each row without one says why)."""
        return any(
            isinstance(t := row.get("time_to_train_min"), float) and math.isfinite(t)
            for row in self.rows
        )


def systems_of(family: FamilyFit | None) -> list[SystemEntry]:
    """The family's measured systems of the workload; none where it never ran it."""
    if not family:
        return []
    return family["systems"]


def counts_run(family: FamilyFit | None) -> list[int]:
    """The counts the family ran the workload at, ascending; none where it never ran it."""
    if not family:
        return []
    return sorted(int(c) for c in family["counts"])
