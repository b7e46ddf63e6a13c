"""Results republished across rounds: the same runs scored again in a later round.

Submitters may carry a result into later rounds unchanged (NVIDIA's ``eos_n434`` BERT is
in v3.1, v4.0 and v4.1). Two results are the same when their runs are: the same workload
on the same accelerator count, and the same set of (``run_start_ms``, ``run_stop_ms``)
pairs, to the millisecond. ``first_round`` is the earliest loaded round holding it, and
``republished_in`` the later loaded rounds that hold it again (comma-separated, empty when
none); a row is a republished copy when its ``round`` is not its ``first_round``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuscale.tables.workloads import round_key

if TYPE_CHECKING:
    import pandas as pd

KEY = ["round", "org", "system_id", "benchmark"]


def _fingerprints(runs: pd.DataFrame) -> dict[tuple, tuple]:
    """{(round, org, system_id, benchmark): the sorted (start, stop) pairs of its runs}."""
    timed = runs.dropna(subset=["run_start_ms", "run_stop_ms"])
    out: dict[tuple, tuple] = {}
    for key, group in timed.groupby(KEY, sort=False):
        starts, stops = group["run_start_ms"].astype(float), group["run_stop_ms"].astype(float)
        pairs = zip(starts, stops, strict=True)
        out[key] = tuple(sorted(pairs))
    return out


def mark_republished(scores: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """``scores`` with ``first_round`` and ``republished_in`` set over the rounds loaded."""
    scores = scores.copy()
    scores["first_round"] = scores["round"].astype(object)
    scores["republished_in"] = ""
    if scores.empty or runs.empty:
        return scores
    prints = _fingerprints(runs)
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(scores[[*KEY, "workload", "accelerators"]].itertuples(index=False)):
        found = prints.get(tuple(row[:4]))
        if found:
            groups.setdefault((row.workload, row.accelerators, found), []).append(i)
    first = scores["first_round"].to_numpy(copy=True)
    later = scores["republished_in"].to_numpy(copy=True)
    rounds = scores["round"].to_numpy()
    for members in groups.values():
        ordered = sorted({rounds[i] for i in members}, key=round_key)
        if len(ordered) < 2:
            continue
        for i in members:
            first[i] = ordered[0]
            later[i] = ", ".join(ordered[1:])
    scores["first_round"] = first
    scores["republished_in"] = later
    return scores


def is_republished(scores: pd.DataFrame) -> pd.Series:
    """Whether each row is a republished copy (its round is not its first)."""
    return scores["first_round"].notna() & (scores["first_round"] != scores["round"])
