"""The study's E' values set against gpuscale's, system by system.

The study (``study.CITATION``) plots E' of every v4.1 system of its four workloads
against the fewest-accelerator, slowest system (its rule), counting a result published
under two system names twice (Dell's Llama2 runs as ``8xXE9680x8H100-SXM-80GB`` and
``8xXE9680x8H100-SXM-80GB-POWER``: 29 systems in its Table I). gpuscale counts those runs
once, under the name its analyses keep (``tables.republished``), so a study row is found
under either name of the same runs (:func:`find_system`). :func:`compare_values` takes
the study's rows (``STUDY_COLUMNS``; ``e_prime`` where the study's value is known, NaN
where only its system is) and gives, per row, gpuscale's system and E' under the study's
rule; :func:`study_rows` makes the rows the study's rule gives on a scores table (both
names of a result counted, as the study counted them).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscale.analysis.metrics import workload_scaling_table
from gpuscale.analysis.study_table import STUDY_ROUND, TABLE_I

STUDY_COLUMNS = ("workload", "submitter", "system_id", "accelerators", "e_prime")
COMPARED_COLUMNS = (
    *STUDY_COLUMNS,
    "found_system_id",  # gpuscale's name of the same runs ("" where not found)
    "other_name",  # found under the other name of the same runs
    "gpuscale_e_prime",
    "difference",  # gpuscale's E' less the study's (NaN where either is unknown)
)


def _twins(scores: pd.DataFrame) -> dict[tuple[str, str], tuple[str, str]]:
    """Each name of a result published under two (submitter or folder, system id), to
    the other's (both ways)."""
    out: dict[tuple[str, str], tuple[str, str]] = {}
    if "same_runs_as" not in scores:
        return out
    copies = scores[scores["same_runs_as"].fillna("").astype(str) != ""]
    for row in copies.itertuples(index=False):
        org, _, kept = str(row.same_runs_as).partition("/")
        for who in {str(row.org), str(row.submitter)}:
            out[(who, str(row.system_id))] = (org, kept)
            out[(org, kept)] = (who, str(row.system_id))
    return out


def find_system(
    table: pd.DataFrame,
    submitter: str,
    system_id: str,
    twins: dict[tuple[str, str], tuple[str, str]],
) -> tuple[pd.Series | None, bool]:
    """(gpuscale's row of the system the study names, whether under the other name of the
    same runs); (None, False) where neither name is in ``table``."""

    def named(who: str, system: str) -> pd.DataFrame:
        mine = (table["submitter"] == who) | (table["org"] == who)
        return table[mine & (table["system_id"] == system)]

    found = named(submitter, system_id)
    if len(found):
        return found.iloc[0], False
    other = twins.get((submitter, system_id))
    if other is not None:
        found = named(*other)
        if len(found):
            return found.iloc[0], True
    return None, False


def study_rows(scores: pd.DataFrame, workloads: tuple[str, ...] = tuple(TABLE_I)) -> pd.DataFrame:
    """The rows the study's rule gives on ``scores`` (its round): every system of each
    workload, both names of a result counted, E' against the fewest-accelerator, slowest
    system."""
    mine = scores[scores["round"] == STUDY_ROUND]
    parts = []
    for workload in workloads:
        table = workload_scaling_table(mine, workload, duplicates=True)
        parts.append(
            pd.DataFrame(
                {
                    "workload": workload,
                    "submitter": table["submitter"].astype(str),
                    "system_id": table["system_id"].astype(str),
                    "accelerators": table["accelerators"].astype(int),
                    "e_prime": table["normalized_efficiency"].astype(float),
                }
            )
        )
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=STUDY_COLUMNS)


def compare_values(scores: pd.DataFrame, study: pd.DataFrame) -> pd.DataFrame:
    """Each of ``study``'s rows (``STUDY_COLUMNS``) with gpuscale's system and E' under
    the study's rule (``COMPARED_COLUMNS``), the system found under either name of the
    same runs."""
    mine = scores[scores["round"] == STUDY_ROUND]
    twins = _twins(mine)
    tables = {w: workload_scaling_table(mine, w) for w in study["workload"].unique()}
    rows = []
    for row in study.itertuples(index=False):
        found, other = find_system(tables[row.workload], row.submitter, row.system_id, twins)
        value, found_id = np.nan, ""
        if found is not None:
            value, found_id = float(found["normalized_efficiency"]), str(found["system_id"])
        rows.append(
            {
                **{c: getattr(row, c) for c in STUDY_COLUMNS},
                "found_system_id": found_id,
                "other_name": other,
                "gpuscale_e_prime": value,
                "difference": value - float(row.e_prime),
            }
        )
    return pd.DataFrame(rows, columns=list(COMPARED_COLUMNS))
