"""Like with like includes the software: a system far from its family's others at its count.

Two systems of one accelerator family at one count differ in their software stack, CPUs
and submitter's tuning, not in their hardware. How far they differ is measured on the
bundled rounds (``benchmarks/plan_spread.py`` writes ``data/count_spread.json``): for each
scored system with at least :data:`MIN_OTHERS` systems of *other* submitters of its
family at its count (same round and workload), its deviation

    ``d = log(T / median T of those others)``;

the spread is a high quantile of ``|d|`` over them all (:func:`measure_spread`). A system
whose ``|d|`` is above the spread, and whose time no other submitter's system at its
count comes within the spread of, is an **outlier** (:func:`held_far`: a time two
submitters' software reach is the family's spread, not one system's); a system whose submitter is an
outlier elsewhere in the family (same round and workload) and that no other submitter can
be held against (alone at its count) rests on that submitter's software alone and is
named with it. Such systems neither set E' (a family's reference is its fewest-count,
slowest system that is no outlier: ``metrics.family_reference``) nor decide "why not more"
(``gpuscale.report.recommend``); the plan leaves them out of its fit
(``gpuscale.planning.systems``). One rule for ``analyze``, the report and ``plan``.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuscale.analysis.measured_bounds import LogRatioBound, read_bound
from gpuscale.tables.analysis import ELSEWHERE

MIN_OTHERS = 2  # systems of other submitters at the count a system is held against
SPREAD_FILE = "count_spread.json"
KEYS = ["round", "workload", "accelerator_family", "accelerators"]


@dataclass(frozen=True, slots=True)
class CountSpread(LogRatioBound):
    """How far a system's time may be from the median of its family's other submitters
    at its count before it is an outlier (``log_ratio``, the ``quantile`` of ``|d|`` over
    ``systems`` systems in ``groups`` counts of the ``rounds`` measured), and the
    ``command`` that measured it."""

    quantile: float
    log_ratio: float
    systems: int
    groups: int
    rounds: tuple[str, ...]
    command: str


@functools.cache
def count_spread() -> CountSpread:
    """The spread measured on the bundled rounds (``data/count_spread.json``)."""
    return read_bound(CountSpread, SPREAD_FILE)


def count_deviations(frame: pd.DataFrame) -> pd.Series:
    """Each system's ``log(T / median T)`` of the systems of other submitters of its
    family at its count (same round and workload); NaN where fewer than
    :data:`MIN_OTHERS` such systems. A row of no known submitter is another's to every
    submitter, and has no deviation of its own."""
    out = np.full(len(frame), np.nan)
    times = pd.to_numeric(frame["time_to_train_min"], errors="coerce").astype(float).to_numpy()
    group = frame.groupby(KEYS, sort=False, dropna=True).ngroup().to_numpy()
    submitter = frame["submitter"].astype(object).to_numpy()
    known = pd.notna(frame["submitter"]).to_numpy(bool)
    for g in np.unique(group[group >= 0]):  # arrays by position: a groupby per count is slow
        rows = np.flatnonzero(group == g)
        names = pd.unique(submitter[rows[known[rows]]])
        if len(names) < 2:
            continue
        for name in names:
            mine = (submitter[rows] == name) & known[rows]
            others = times[rows[~mine]]
            others = others[~np.isnan(others)]
            median = float(np.median(others)) if len(others) >= MIN_OTHERS else math.nan
            if median > 0:
                out[rows[mine]] = np.log(times[rows[mine]] / median)
    return pd.Series(out, index=frame.index, dtype=float)


def measure_spread(scores: pd.DataFrame, quantile: float) -> dict[str, object]:
    """The spread of ``scores`` (scored systems, each result once: ``scored_systems``):
    the ``quantile`` of ``|d|`` (:func:`count_deviations`) and what it rests on."""
    d = count_deviations(scores).dropna()
    held = scores.loc[d.index]
    return {
        "quantile": quantile,
        "log_ratio": float(np.quantile(d.abs().to_numpy(), quantile)),
        "systems": len(d),
        "groups": int(held[KEYS].drop_duplicates().shape[0]),
        "rounds": sorted(held["round"].astype(str).unique()),
    }


def held_far(frame: pd.DataFrame, d: pd.Series, log_ratio: float) -> pd.Series:
    """Which systems are far from their family's others at their count: ``|d|`` above
    ``log_ratio`` (``d``: :func:`count_deviations`), and no other submitter's system
    there within ``log_ratio`` of its time; where every system at a count is so, none is.
    A time another submitter's software also reaches, or a count whose systems are all
    apart, is the family's spread, not one system's: where every system at a count is
    beyond the others' median (two fast submitters and two slow), none is far; nor is one
    that a far neighbour's pull on a median of two makes look far."""
    times = pd.to_numeric(frame["time_to_train_min"], errors="coerce").astype(float)
    out = pd.Series(False, index=frame.index, dtype=bool)
    first = (d.abs() > log_ratio).to_numpy(bool)
    for index in frame.index[first]:
        row = frame.loc[index]
        peers = (frame[KEYS] == row[KEYS]).all(axis=1) & (frame["submitter"] != row["submitter"])
        near = np.abs(np.log(times[peers.to_numpy(bool)] / times[index])) <= log_ratio
        out[index] = not near.any()
    # where every system at a count is far, there are no others to be far from
    every = out.groupby([frame[k] for k in KEYS], sort=False, dropna=False).transform("all")
    return out & ~every


def outliers(frame: pd.DataFrame, spread: CountSpread | None = None) -> pd.Series:
    """Why each system is an outlier (module docstring), "" where it is not:
    ``2.49x the median of B200's other submitters at 8`` for one far from its family's
    others at its count; ``Acme alone at 16; elsewhere 2.49x ...`` for one whose submitter is
    such an outlier elsewhere in the family and that no other submitter ran beside."""
    spread = spread or count_spread()
    out = pd.Series("", index=frame.index, dtype=str)
    if frame.empty:
        return out
    d = count_deviations(frame)
    far = held_far(frame, d, spread.log_ratio)
    said: dict[tuple[object, ...], str] = {}
    for index in frame.index[far.to_numpy(bool)]:
        row = frame.loc[index]
        why = (
            f"{math.exp(d[index]):.2f}x the median of {row['accelerator_family']}'s other "
            f"submitters at {int(row['accelerators']):,}"
        )
        out[index] = why
        key = (row["round"], row["workload"], row["accelerator_family"], row["submitter"])
        said.setdefault(key, why)
    alone = d.isna()
    for index in frame.index[alone.to_numpy(bool)]:
        row = frame.loc[index]
        key = (row["round"], row["workload"], row["accelerator_family"], row["submitter"])
        if key in said:
            alone = f"{row['submitter']} alone at {int(row['accelerators']):,}"
            out[index] = f"{alone}{ELSEWHERE}{said[key]}"
    return out


def outlier_column(frame: pd.DataFrame) -> pd.Series:
    """``frame``'s ``outlier`` column where it has one, else :func:`outliers` of it."""
    if "outlier" in frame:
        return frame["outlier"].fillna("").astype(str)
    return outliers(frame)
