"""How well does ``gpuscale plan`` forecast MLPerf time to train? Scored like a forecast.

Usage::

    python benchmarks/plan_accuracy.py [--part forward|loso|speed|all] [--old REF]

(forward) **Forward in time**, the test that counts: the plan fitted (and its intervals
    calibrated) on the rounds before R predicts every result new in R whose workload was
    measured before (v3.1 from v3.0, ..., v5.0 from v3.0-v4.1).
(loso) **Leave one system out**: each result predicted from every other (its workload
    refitted without it), at its own round's level; the method was developed on this part
    only.

Each prediction is in one of three classes: (i) the family ran that count of the workload
before, (ii) it did not (``ii_in``: inside its measured counts, ``ii_out``: outside them),
(iii) the family never ran the workload (its level borrowed through the other workloads).
Per class: median absolute error, share within 10%, and the 80% intervals' coverage, beside
the baselines, computed on the same training systems: **lookup** (the nearest measured
count of the same workload and family, the median of the newest round that has it, time
scaled linearly to the count asked), **ideal** (the smallest count's, scaled linearly) and,
with ``--old REF`` (default ``main``, where git has it), **the plan of REF** (run in a
subprocess on REF's own source and bundled data). Then the goals, each met or not.

(speed) One ``gpuscale plan -w bert -a H100 -n 8`` and one with the default counts, new code
against REF's, run as paired subprocesses (REF's first, then this checkout's, five times):
CPU seconds (user + system) per command, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from gpuscale import load_round
from gpuscale.planning.calibrate import backtest, calibrated_fits
from gpuscale.planning.fits import speeds
from gpuscale.planning.predict import count_class, predict_point
from gpuscale.planning.systems import measured
from gpuscale.planning.workload import fit_workload
from gpuscale.tables.workloads import round_key

ROOT = Path(__file__).resolve().parents[1]
CLASSES = {
    "i": "(i) count measured before",
    "ii_in": "(ii) not measured, inside",
    "ii_out": "(ii) not measured, outside",
    "iii": "(iii) family never ran it",
}
GOALS = {"ii_median": 15.0, "ii_vs_lookup": 0.30, "coverage": (75.0, 85.0), "class": (65, 90)}


def lookup(train: pd.DataFrame, n: float) -> float:
    """The nearest measured count's newest-round median, scaled linearly to ``n``."""
    if train.empty:
        return math.nan
    counts = train["accelerators"].to_numpy(float)
    near = counts[np.argmin(np.abs(np.log(counts / n)))]
    at = train[train["accelerators"] == near]
    newest = max(at["round"], key=round_key)
    return float(at[at["round"] == newest]["time_to_train_min"].median()) * near / n


def ideal(train: pd.DataFrame, n: float) -> float:
    """The smallest count's newest-round median, scaled linearly to ``n``."""
    if train.empty:
        return math.nan
    small = float(train["accelerators"].min())
    at = train[train["accelerators"] == small]
    newest = max(at["round"], key=round_key)
    return float(at[at["round"] == newest]["time_to_train_min"].median()) * small / n


def with_baselines(cases: pd.DataFrame, systems: pd.DataFrame, forward: bool) -> pd.DataFrame:
    """``cases`` with ``lookup`` and ``ideal`` from each case's training systems."""
    out = []
    for case in cases.itertuples(index=False):
        mine = systems[
            (systems["workload"] == case.workload)
            & (systems["accelerator_family"] == case.family)
        ]
        if forward:
            mine = mine[[round_key(r) < round_key(case.round) for r in mine["round"]]]
        else:
            mine = mine[
                ~(
                    (mine["round"] == case.round)
                    & (mine["system_name"] == case.system)
                    & (mine["submitter"] == case.submitter)
                    & (mine["accelerators"] == case.devices)
                )
            ]
        out.append({"lookup": lookup(mine, case.devices), "ideal": ideal(mine, case.devices)})
    return pd.concat([cases.reset_index(drop=True), pd.DataFrame(out)], axis=1)


def forward(systems: pd.DataFrame) -> pd.DataFrame:
    """Part (forward): each round from the rounds before it (see the module docstring)."""
    cases = backtest(systems, calibrated_fits)
    return with_baselines(cases, systems, forward=True)


def loso(systems: pd.DataFrame) -> pd.DataFrame:
    """Part (loso): each system from all the others, at its own round's level."""
    fits = calibrated_fits(systems)
    out = []
    for i, row in enumerate(systems.itertuples(index=False)):
        w, f, n = row.workload, row.accelerator_family, int(row.accelerators)
        rest = systems[(systems["workload"] == w) & (systems.index != i)]
        if rest.empty:
            continue
        mine = dict(fits["workloads"]) | {w: fit_workload(rest.reset_index(drop=True))}
        trial = fits | {"workloads": mine}
        if f not in mine[w]["families"]:
            trial["speed"] = speeds(mine, spread=False)
            if f not in trial["speed"]["family"]:
                continue
        p = predict_point(trial, w, f, n, row.round)
        out.append(
            {
                "round": row.round,
                "workload": w,
                "family": f,
                "devices": n,
                "submitter": row.submitter,
                "system": row.system_name,
                "measured": row.time_to_train_min,
            }
            | p
            | {"log_error": math.log(p["minutes"] / row.time_to_train_min)}
        )
    return with_baselines(pd.DataFrame(out), systems, forward=False)


def _errors(frame: pd.DataFrame, method: str) -> pd.Series:
    return ((frame[method] / frame["measured"] - 1).abs() * 100).dropna()


def summary(cases: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """Per class and overall: cases, each method's median |error| % and share within
    10%, the plan's 80% coverage."""
    planned = cases[cases["class"].isin(list(CLASSES))]
    groups = [(CLASSES[k], planned[planned["class"] == k]) for k in CLASSES]
    groups.append(("all planned", planned))
    rows = []
    for name, frame in groups:
        row: dict = {"class": name, "cases": len(frame)}
        for method in methods:
            err = _errors(frame, method)
            row[f"{method} median %"] = float(err.median()) if len(err) else math.nan
            row[f"{method} within 10%"] = float((err <= 10).mean() * 100) if len(err) else math.nan
        covered = (frame["minutes_low"] <= frame["measured"]) & (
            frame["measured"] <= frame["minutes_high"]
        )
        row["plan coverage %"] = float(covered.mean() * 100) if len(frame) else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def show(title: str, cases: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    table = summary(cases, methods)
    print(title)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    left = cases[~cases["class"].isin(list(CLASSES))]["class"].value_counts()
    if len(left):
        print("    not planned: " + ", ".join(f"{k} {v}" for k, v in left.items()))
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=["forward", "loso", "speed", "all"], default="all")
    args = parser.parse_args()
    systems = measured(load_round().scores)
    methods = ["plan", "lookup", "ideal"]
    if args.part in ("loso", "all"):
        start = time.perf_counter()
        cases = loso(systems).rename(columns={"minutes": "plan"})
        show(f"leave one system out ({time.perf_counter() - start:.0f} s):", cases, methods)
        cases.to_csv("/tmp/plan_loso.csv", index=False)
    if args.part in ("forward", "all"):
        start = time.perf_counter()
        cases = forward(systems).rename(columns={"minutes": "plan"})
        show(f"forward in time ({time.perf_counter() - start:.0f} s):", cases, methods)


if __name__ == "__main__":
    main()
