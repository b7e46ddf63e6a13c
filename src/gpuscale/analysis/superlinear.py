"""E' above 1, and why: the one place that marks super-linear values for the tables, the
figures and the prose.

E' = (T_ref / T) / (N / N_ref) above 1 reads as super-linear scaling, which MLPerf's
time-to-train hardly ever shows; it is nearly always a comparison of different systems.
Every value above 1 gets one short reason (column ``superlinear``), the first that holds:

* ``other family``: another accelerator family than the reference (faster devices);
* ``below N_ref``: fewer accelerators than the reference (a reference named at a large
  count): E' above 1 there is sub-linear scaling from N up to N_ref seen from below
  (T_ref more than N / N_ref of T), not a super-linear value;
* ``faster at N_ref``: the same count as the reference, a faster system (E' = T_ref / T):
  the same accelerators, so its software (or host);
* ``within spread``: more accelerators than the reference and above 1 by at most
  ``TOLERANCE`` (0.5%), less than the run-to-run spread of the olympic average: not a
  super-linear value;
* ``slow reference``: against the fastest system of its family at the reference's count,
  E' is at most ``1 + TOLERANCE``: the reference is slow (software, batch), not the
  scaling good;
* ``above peers too``: above 1 against that faster peer as well: the systems differ in
  more than the count (batch, samples to converge, software); check it.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscale.plausibility import LINEAR_SPREAD

TOLERANCE = LINEAR_SPREAD

REASONS: dict[str, str] = {
    "other family": "another accelerator family than the reference (faster devices), not scaling",
    "below N_ref": "fewer accelerators than the reference: sub-linear scaling up to its "
    "count, seen from below, not super-linear",
    "faster at N_ref": "a faster system at the reference's own count on its accelerators: "
    "software (or host), not scaling",
    "slow reference": "a faster peer at the reference's count brings E' to 1 or below: "
    "the reference is slow, not the scaling super-linear",
    "within spread": f"within {TOLERANCE:.1%} of 1, less than the run-to-run spread of the "
    "olympic average: not super-linear",
    "above peers too": "above 1 against the fastest peer at the reference's count too: "
    "the systems differ in more than the count (batch, samples to converge, software)",
}


def superlinear(table: pd.DataFrame) -> pd.Series:
    """The short reason of each E' above 1 (``REASONS``' keys), "" elsewhere. ``table``:
    a scaling table (``gpuscale.tables.SCALING_COLUMNS`` up to ``normalized_efficiency``;
    per-family references allowed)."""
    out = pd.Series("", index=table.index, dtype=str)
    above = (table["normalized_efficiency"] > 1).to_numpy(bool)
    if not above.any():
        return out
    # by position, in arrays: a table is read once per reference, and tables are small
    families = table["accelerator_family"].to_numpy(object)
    n = table["accelerators"].astype(float).to_numpy()
    times = table["time_to_train_min"].astype(float).to_numpy()
    keys = zip(table["org"].astype(str), table["system_id"].astype(str), strict=True)
    family_of = dict(zip(keys, families, strict=True))  # a key of two rows: the last's
    ref_org = table["reference_org"].astype(str).to_numpy(object)
    ref_id = table["reference_system_id"].astype(str).to_numpy(object)
    n_ref = table["reference_accelerators"].astype(float).to_numpy()
    e_prime = table["normalized_efficiency"].astype(float).to_numpy()
    for i in np.flatnonzero(above):
        ref_key = (ref_org[i], ref_id[i])
        if ref_key in family_of and families[i] != family_of[ref_key]:
            out.iloc[i] = "other family"
        elif n[i] < n_ref[i]:
            out.iloc[i] = "below N_ref"
        elif n[i] == n_ref[i]:
            out.iloc[i] = "faster at N_ref"
        elif e_prime[i] <= 1 + TOLERANCE:
            out.iloc[i] = "within spread"
        else:  # E' against the fastest system of its family at the reference's count
            peers = times[(families == families[i]) & (n == n_ref[i])]
            peers = peers[~np.isnan(peers)]
            fastest = peers.min() if len(peers) else np.nan
            against_peer = (fastest / times[i]) / (n[i] / n_ref[i])
            out.iloc[i] = "slow reference" if against_peer <= 1 + TOLERANCE else "above peers too"
    return out


def sentence(code: str) -> str:
    """The reason in words for a tooltip or a finding ("" for "")."""
    return REASONS.get(code, "")
