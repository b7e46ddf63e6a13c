"""The plan table (``gpuscale plan``, ``gpuscale.planning``): one row per device count asked.

Columns (units in the names):

* ``devices``: accelerators of the planned run; ``nodes``: ``ceil(devices /
  devices_per_node)``;
* ``minutes``, ``minutes_low``, ``minutes_high``: predicted time to train and its 80%
  interval (from the model's out-of-sample log errors; wider when extrapolating);
* ``global_batch``: the global batch the prediction assumes (fitted on the family's own
  submissions, ``log B = a + b log N``);
* ``expected_samples``: samples (epochs for the epoch-counted workloads) to converge at
  that batch, ``E(B) = E_min (1 + B / B_noise)`` fitted to the RCPs; NaN without RCPs;
* ``throughput_efficiency``: throughput per device relative to the smallest count asked
  (``X(N) N_0 / (X(N_0) N)``); ``convergence_factor``: ``E(B(N_0)) / E(B(N))``;
* ``extrapolated``: outside the device counts the family measured on this workload (or
  borrowed from another workload);
* ``nearest``: the measured systems the prediction leans on, a list of
  ``{round, submitter, system, devices, minutes}`` (a ``; ``-joined string in CSV);
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
    "global_batch",
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
NEAREST_KEYS: tuple[str, ...] = ("round", "submitter", "system", "devices", "minutes")
