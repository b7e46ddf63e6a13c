"""The plan table (``gpuscale plan``, ``gpuscale.planning``): one row per accelerator count
asked.

Columns (units in the names; dtypes in :data:`PLAN_SCHEMA`):

* ``accelerators``: accelerators of the planned run; ``nodes``: ``ceil(accelerators /
  devices_per_node)``, the devices per node given or the family's own
  (``gpuscale.planning.nodes``: the plan's ``model["devices_per_node"]`` says which);
* ``time_to_train_min``, ``time_to_train_min_low``, ``time_to_train_min_high``: predicted
  time to train (minutes) and its 80% interval (calibrated per count class by forecasting
  each past round from the rounds before it; wider per octave beyond the family's counts);
  NaN where ``flags`` says "no time: " (below the smallest count any system of the
  workload ran, under one sample per accelerator where no system ran so few, or more than
  3 octaves beyond the largest count any system ran: ``gpuscale.planning.limits``);
* ``count_class``: ``i`` (the family ran this count of the workload before), ``ii_in`` /
  ``ii_out`` (it did not: between / beyond the counts it ran), ``iii`` (the family never
  ran the workload: its level borrowed through its other workloads);
* ``global_batch``: the global batch the prediction assumes (the family's own at a count
  it ran, unrounded: its newest results' own there; else the workload's typical batch
  times the family's ratio to it, rounded to one a user can run): ``accelerators`` times
  a whole per-device batch, or, for a workload whose submissions ran fractions of a
  sample per device (model or tensor parallel), ``m`` samples per ``k`` devices, ``k`` a
  power of two (at least the finest the submissions ran), ``m`` whole, the nearest in
  log the assumed one (never chosen by the count's divisors);
  ``batch_per_accelerator``: ``global_batch / accelerators``, a float (a whole number,
  or ``m / k``: not a per-device batch but ``m`` samples per ``k`` devices; where ``k``
  does not divide the count, the global batch rounded to whole samples over the count:
  1 sample per 8 devices on 316 is 40 / 316, said as 1 sample per 7.90 devices); both, and
  ``expected_to_converge`` and ``convergence_factor``, NA where the row has no time;
* ``expected_to_converge``: what converging takes at that batch, in ``convergence_unit``
  (samples; epochs or tokens where the RCPs count those), ``E(B) = E_min (1 + B /
  B_noise)`` fitted to the RCPs; NaN without RCPs;
  ``convergence_unit``: what ``expected_to_converge`` counts (``samples``, ``epochs`` or
  ``tokens``: the unit of the RCPs of the round the plan is at), as the analysis' column
  of that name;
* ``throughput_efficiency``: throughput per accelerator relative to the smallest count
  asked that has a time, ``N_0`` (``X(N) N_0 / (X(N_0) N)``; NaN without a time);
  ``convergence_factor``: ``E(B(N_0)) / E(B(N))``;
* ``extrapolated``: ``count_class`` ``ii_out`` or ``iii``;
* ``nearest``: the measured systems the prediction leans on, a list of
  ``{round, submitter, system, accelerators, time_to_train_min, family}``
  (:class:`Nearest`; in CSV a column per key of each, ``nearest_1_round`` to
  ``nearest_3_family``: :func:`nearest_columns`): the family's at the count nearest, or
  (class ``iii``) any family's;
* ``accelerator_hours`` (``accelerators * time_to_train_min / 60``), ``cost``
  (``accelerator_hours *`` the price per accelerator-hour; NaN without a price),
  ``energy_kwh`` (``accelerator_hours *`` watts / 1000; NaN without a power), as
  ``gpuscale.tables.measures`` computes them;
* ``pareto``: on the time / accelerator-hours Pareto front of the counts asked;
  ``stops_paying``: the equilibrium criteria (``gpuscale.analysis.equilibrium``) that pick
  this count as the point past which more accelerators stop paying, comma-separated; both
  over the rows without flags only;
* ``beyond_linear``: where the row is planned faster than linear against a smaller count
  asked (time ratio above device ratio), how much (``1.78x as fast as 16 on 1.5x the
  devices``) and one submitter's measured results at both counts that ran so ("measured
  so: family ratio (round)"), or "no result measured so" (and ``flags`` says it), then
  any pair of two submitters that ran so, with both and their global batches ("by one
  submitter; across two: ...": no support, ``gpuscale.planning.linear``); empty otherwise;
* ``flags``: why the row cannot be trusted, ``"; "``-separated, empty when none: each
  "no time: ..." reason above, "far beyond the data: ..." (more than one octave beyond
  the largest count any system ran), "super-linear: ..." (throughput per accelerator, at
  the same per-device batch, above ``gpuscale.plausibility.SUPERLINEAR_EFFICIENCY`` of the
  plan's at every smaller count the family ran: ``gpuscale.planning.limits``; a property
  of the count, not of the other counts asked), "batch beyond the data: ..." (a per-device
  batch above the most any result of the workload ran, naming it, its family and round,
  and the plan's time at it), "global batch above the data: ..." (likewise of the global
  batch: its samples to converge the convergence references' line continued), "batch
  below the data: ..." (a per-device batch below the fewest any result ran, naming it,
  and the plan at the nearest smaller count whose batch keeps it, within the data:
  ``limits.whole_batch_near``), "more than linear: ..." (planned faster
  than linear against a smaller count asked where no submitter's own results between
  those counts ran so: ``beyond_linear``);
* ``model_state_gb``: the model state each device holds at that count (weights,
  gradients, optimizer states and frozen weights under the workload's sharding:
  ``gpuscale.hardware.memory``; GB); NaN where the workload's parameters are not known.
  A count whose devices cannot hold it has no time ("no time: the model state alone ...",
  naming the fewest devices that hold it);
* ``rests_on``: ``one submission`` or ``one submitter`` where the count's level rests on
  so little (at a count the family ran, its results there; elsewhere all its results on
  the workload): one software stack, not a consensus; empty otherwise;
  ``rests_on_submitter``: whose (the one submitter), empty where ``rests_on`` is;
  ``rests_on_outlier``: where that submitter's software is an outlier in the workload's
  data, any family or round (``gpuscale.analysis.outliers``, the rule ``analyze`` and the
  report use; left out of the fit): ``v4.0 H100_n1: 3.92x the median of H100-SXM5-80GB's
  other submitters at 8``, ``"; "``-joined; empty where it is none;
* ``crosses``: where the count's level (class ``iii``, borrowed from the families that ran
  the workload) or its ``beyond_linear`` support (another family's or submitter's measured
  pair) crosses ``hardware generation`` (the product's architecture: Ampere, Hopper) or
  ``software stack`` (a submitter's), comma-separated; ``crosses_generation_from`` /
  ``_to`` and ``crosses_software_from`` / ``_to``: from what to what (the family's
  generation and submitters on the workload, the others'), ``", "``-joined; all empty
  where nothing is crossed (``gpuscale.planning.crossing``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypedDict

# Each column in order with the dtype its frame holds (see ``tables.rounds``; ``object``:
# the ``nearest`` lists).
PLAN_SCHEMA: dict[str, str] = {
    "accelerators": "int64",
    "nodes": "int64",
    "time_to_train_min": "float64",
    "time_to_train_min_low": "float64",
    "time_to_train_min_high": "float64",
    "count_class": "str",
    "global_batch": "Int64",
    "batch_per_accelerator": "float64",
    "expected_to_converge": "float64",
    "convergence_unit": "str",
    "throughput_efficiency": "float64",
    "convergence_factor": "float64",
    "extrapolated": "bool",
    "nearest": "object",
    "accelerator_hours": "float64",
    "cost": "float64",
    "energy_kwh": "float64",
    "pareto": "bool",
    "stops_paying": "str",
    "beyond_linear": "str",
    "flags": "str",
    "model_state_gb": "float64",
    "rests_on": "str",
    "rests_on_submitter": "str",
    "rests_on_outlier": "str",
    "crosses": "str",
    "crosses_generation_from": "str",
    "crosses_generation_to": "str",
    "crosses_software_from": "str",
    "crosses_software_to": "str",
}
PLAN_COLUMNS: tuple[str, ...] = tuple(PLAN_SCHEMA)


class Nearest(TypedDict):
    """A measured system a plan's count leans on: one entry of its ``nearest`` list."""

    round: str
    submitter: str
    system: str
    accelerators: int
    time_to_train_min: float
    family: str


NEAREST_KEYS: tuple[str, ...] = tuple(Nearest.__annotations__)
# The systems a count leans on, at most (``planning.result.leaned_on``): CSV's columns
NEAREST_SYSTEMS = 3


def nearest_columns(nearest: Sequence[Nearest]) -> dict[str, object]:
    """A count's ``nearest`` as CSV's flat columns, ``nearest_{i}_{key}`` for ``i`` in 1 to
    :data:`NEAREST_SYSTEMS` and each :data:`NEAREST_KEYS` (the family and the time as JSON
    keeps them), None past the systems it has: one table, every field its own column."""
    return {
        f"nearest_{i}_{key}": nearest[i - 1][key] if i <= len(nearest) else None  # type: ignore[literal-required]
        for i in range(1, NEAREST_SYSTEMS + 1)
        for key in NEAREST_KEYS
    }
