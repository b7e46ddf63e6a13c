"""The plan table (``gpuscale plan``, ``gpuscale.planning``): one row per device count asked.

Columns (units in the names):

* ``devices``: accelerators of the planned run; ``nodes``: ``ceil(devices /
  devices_per_node)``;
* ``minutes``, ``minutes_low``, ``minutes_high``: predicted time to train and its 80%
  interval (calibrated per count class by forecasting each past round from the rounds
  before it; wider per octave beyond the family's counts);
* ``count_class``: ``i`` (the family ran this count of the workload before), ``ii_in`` /
  ``ii_out`` (it did not: between / beyond the counts it ran), ``iii`` (the family never
  ran the workload: its level borrowed through its other workloads);
* ``global_batch``: the global batch the prediction assumes (the family's own at a count
  it ran, else the workload's typical batch times the family's ratio to it);
  ``per_device_batch``: ``global_batch / devices`` (unrounded);
* ``expected_samples``: samples (epochs for the epoch-counted workloads) to converge at
  that batch, ``E(B) = E_min (1 + B / B_noise)`` fitted to the RCPs; NaN without RCPs;
* ``throughput_efficiency``: throughput per device relative to the smallest count asked
  (``X(N) N_0 / (X(N_0) N)``); ``convergence_factor``: ``E(B(N_0)) / E(B(N))``;
* ``extrapolated``: ``count_class`` ``ii_out`` or ``iii``;
* ``nearest``: the measured systems the prediction leans on, a list of
  ``{round, submitter, system, devices, minutes, family}`` (a ``; ``-joined string in
  CSV): the family's at the count nearest, or (class ``iii``) any family's;
* ``device_hours`` (``devices * minutes / 60``), ``cost`` (``device_hours *`` the price
  per device-hour; NaN without a price), ``energy_kwh`` (``device_hours *`` watts / 1000;
  NaN without a power);
* ``pareto``: on the time / device-hours Pareto front of the counts asked;
  ``stops_paying``: the equilibrium criteria (``gpuscale.analysis.equilibrium``) that pick
  this count as the point past which more devices stop paying, comma-separated.
"""

from __future__ import annotations

PLAN_COLUMNS: tuple[str, ...] = (
    "devices",
    "nodes",
    "minutes",
    "minutes_low",
    "minutes_high",
    "count_class",
    "global_batch",
    "per_device_batch",
    "expected_samples",
    "throughput_efficiency",
    "convergence_factor",
    "extrapolated",
    "nearest",
    "device_hours",
    "cost",
    "energy_kwh",
    "pareto",
    "stops_paying",
)

# The keys of each ``nearest`` entry.
NEAREST_KEYS: tuple[str, ...] = ("round", "submitter", "system", "devices", "minutes", "family")
