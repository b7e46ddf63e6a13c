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
    out = pd.Series("", index=table.index, dtype=object)
    above = (table["normalized_efficiency"] > 1).to_numpy(bool)
    if not above.any():
        return out
    key = table["org"].astype(str) + "/" + table["system_id"].astype(str)
    family_of = dict(zip(key, table["accelerator_family"], strict=True))  # the last row's
    n_all = table["accelerators"].astype(float)
    # the fastest time of each family at each count: a reference's peers
    fastest_at = table["time_to_train_min"].groupby([table["accelerator_family"], n_all]).min()
    rows = table[above]
    ref_key = rows["reference_org"].astype(str) + "/" + rows["reference_system_id"].astype(str)
    families, times = rows["accelerator_family"].tolist(), rows["time_to_train_min"].tolist()
    e_prime = rows["normalized_efficiency"].astype(float).tolist()
    n_refs = rows["reference_accelerators"].astype(float).tolist()
    for i, (index, n) in enumerate(zip(rows.index, n_all[above].tolist(), strict=True)):
        family, n_ref = families[i], n_refs[i]
        if ref_key.iloc[i] in family_of and family != family_of[ref_key.iloc[i]]:
            out[index] = "other family"
        elif n < n_ref:
            out[index] = "below N_ref"
        elif n == n_ref:
            out[index] = "faster at N_ref"
        elif e_prime[i] <= 1 + TOLERANCE:
            out[index] = "within spread"
        elif _against_fastest(fastest_at, family, n_ref, n, float(times[i])) <= 1 + TOLERANCE:
            out[index] = "slow reference"
        else:
            out[index] = "above peers too"
    return out


def _against_fastest(
    fastest_at: pd.Series, family: object, n_ref: float, n: float, t: float
) -> float:
    """E' of a system at ``n`` accelerators taking ``t`` minutes against the fastest
    system of its ``family`` at ``n_ref`` (NaN where the family ran none there)."""
    fastest = float(fastest_at.get((family, n_ref), float("nan")))
    return (fastest / t) / (n / n_ref)


def sentence(code: str) -> str:
    """The reason in words for a tooltip or a finding ("" for "")."""
    return REASONS.get(code, "")
