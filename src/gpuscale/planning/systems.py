"""What the plan is fitted on: the measured systems of the scores table, once each.

:func:`measured` keeps the closed division, a valid time and device count, a named
accelerator, each result once (a copy republished in a later loaded round, or repeated
under a second system name in its round, is left out: ``gpuscale.tables.republished``),
and adds what the model reads:

* ``expected_samples``: ``E_R(B)`` from the round's RCPs, or for a round without them the
  nearest later round's, else the nearest earlier one's (NaN where no round of the
  workload has any: then convergence is not modelled, ``convergence`` is 1);
* ``quality_target``: the target the round's ruleset sets for the benchmark (NaN where
  none is known);
* ``convergence``: ``E_R(B) / E_R(B_ref)``, samples to converge relative to those at the
  workload's reference batch ``B_ref`` (the median global batch of its systems): RCPs
  change units between rounds (UNet3D counted epochs in v3.0 and samples from v3.1), the
  ratio does not;
* ``era``: 0, 1, ... the workload's rules as its RCPs say: a new era starts in a round whose
  ``E_R(B_ref)`` differs by more than 10% from the round before (Stable Diffusion v4.0:
  a new benchmark or target, not new software; GPT-3 v4.1 starts none: its RCPs add a
  point at batch 6,144 to v4.0's); a round without RCPs takes
  its donor's ``E_R(B_ref)``, so a change of target there (BERT: 0.712 in v0.7, 0.720
  from v1.0) starts no era: the plan says it pools the two (``quality_target``);
* ``log_y``: the device-minutes per expected sample, ``log(T N / convergence)``;
* ``outlier``: why the system is an outlier, "" where it is not
  (``gpuscale.analysis.outliers``: its time far from its family's other submitters' at its
  count, or alone at a count beside such a submitter's): :func:`fitted` leaves those out
  of the fit, which neither sets a level nor a shape on one submitter's software; the
  backtests still forecast them.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gpuscale.analysis.critical_batch import ERA_STEP, round_target
from gpuscale.analysis.decompose import expected_samples
from gpuscale.analysis.outliers import outliers
from gpuscale.planning.nodes import DEFAULT_PER_NODE
from gpuscale.quantities import agreeing, counted, joined
from gpuscale.tables.republished import counted_in_analyses, is_log_flagged, is_same_runs_copy
from gpuscale.tables.rounds import UNKNOWN_FAMILY
from gpuscale.tables.workloads import round_key

COLUMNS = [
    "round",
    "workload",
    "benchmark",
    "accelerator_family",
    "submitter",
    "system_name",
    "accelerators",
    "global_batch_size",
    "time_to_train_min",
]


def timed(scores: pd.DataFrame) -> pd.DataFrame:
    """The results of ``scores`` the plan may use, every column kept: the closed division,
    a valid time, device count and global batch, a named accelerator, each result once
    (:func:`measured` adds what the model reads)."""
    rows = counted_in_analyses(scores)
    if "division" in rows:
        rows = rows[rows["division"] == "closed"]
    if "first_round" in rows:  # a copy whose first round is not loaded is kept (once)
        loaded = set(rows["round"].astype(str))
        first = rows["first_round"].astype(object)
        rows = rows[~((rows["round"] != first) & first.isin(loaded)).to_numpy(bool)]
    rows = rows[rows["accelerator_family"].notna()]
    rows = rows[rows["accelerator_family"].astype(str) != UNKNOWN_FAMILY]
    # as floats: a nullable count (Int64, <NA> for a CPU-only system) cannot mask rows
    time = pd.to_numeric(rows["time_to_train_min"], errors="coerce").astype(float)
    n = pd.to_numeric(rows["accelerators"], errors="coerce").astype(float)
    batch = pd.to_numeric(rows["global_batch_size"], errors="coerce").astype(float)
    ok = np.isfinite(time) & (time > 0) & np.isfinite(n) & (n > 0) & np.isfinite(batch)
    return rows[(ok & (batch > 0)).to_numpy(bool)]


def measured(scores: pd.DataFrame) -> pd.DataFrame:
    """The systems the plan may use (see the module docstring), one row each."""
    rows = timed(scores)[COLUMNS].copy()
    rows["accelerators"] = rows["accelerators"].astype(float)
    rows["global_batch_size"] = rows["global_batch_size"].astype(float)
    rows["time_to_train_min"] = rows["time_to_train_min"].astype(float)
    for column in ("round", "workload", "benchmark", "accelerator_family"):
        rows[column] = rows[column].astype(str)
    rows = rows.reset_index(drop=True)
    parts = [_convergence(mine) for _, mine in rows.groupby("workload", sort=False)]
    rows = pd.concat(parts).sort_index() if parts else rows.assign(**dict.fromkeys(ADDED))
    rows["log_y"] = np.log(rows["time_to_train_min"] * rows["accelerators"] / rows["convergence"])
    rows["outlier"] = outliers(rows) if len(rows) else pd.Series(dtype=object)
    return rows


def fitted(systems: pd.DataFrame) -> pd.DataFrame:
    """The systems the fit rests on: those that are no outliers (``outlier`` empty:
    ``gpuscale.analysis.outliers``, the rule ``analyze`` and the report use)."""
    if "outlier" not in systems:
        return systems
    return systems[systems["outlier"].fillna("").astype(str).to_numpy() == ""]


def unplanned(scores: pd.DataFrame) -> dict[str, str]:
    """{workload: why the plan has none} for each workload of ``scores`` with no
    closed-division result with a time, said from its results (each once): ``its 36
    results here are 6 open division and 30 closed division without a score; ...``."""
    if "division" not in scores:
        return {}
    rows = scores[~is_same_runs_copy(scores).to_numpy(bool)].dropna(subset=["workload"])
    time = pd.to_numeric(rows["time_to_train_min"], errors="coerce").astype(float)
    flagged = is_log_flagged(rows).to_numpy(bool)
    timed = (np.isfinite(time) & (time > 0)).to_numpy(bool) & ~flagged
    division = rows["division"].astype(str).to_numpy()
    workloads = rows["workload"].astype(str).to_numpy()
    lacking = _lacking(rows)
    out = {}
    for workload in sorted(set(workloads)):
        mine = workloads == workload
        closed = mine & (division == "closed")
        if (closed & timed).any():
            if why := _none_complete(lacking[closed & timed]):
                out[workload] = why
            continue
        others = sorted({str(d) for d in division[mine & ~closed]})
        kinds = [(int((mine & (division == d)).sum()), f"{d} division") for d in others]
        if closed.any():  # why, as the scores say it (v1.1 BERT: a check every run fails)
            reasons = rows.loc[mine & closed, "score_reason"] if "score_reason" in rows else []
            said = pd.Series(reasons, dtype=object).dropna().astype(str)
            said = said[said != ""]
            why = f" (the most common reason: {said.value_counts().index[0]})" if len(said) else ""
            unscored = closed & ~flagged
            kinds.append((int(unscored.sum()), f"closed division without a score{why}"))
        if (mine & flagged).any():
            kinds.append(
                (int((mine & flagged).sum()), "flagged: logs contradicting their folder (log_flag)")
            )
        kinds = [(k, what) for k, what in kinds if k]
        parts = [f"{k:,} {what}" for k, what in kinds] if len(kinds) > 1 else [kinds[0][1]]
        total = int(mine.sum())
        out[workload] = (
            f"its {counted(total, 'result')} here {agreeing(total, 'is', 'are')} "
            f"{joined(parts)}; the plan is fitted on the closed division's results with a time"
        )
        if (mine & ~closed & timed).any():
            shows = others[0] if len(others) == 1 else "all"
            out[workload] += f" (gpuscale analyze --division {shows} shows the {shows} ones)"
    return out


# What :func:`measured` needs of a timed result besides its time, and its name in words.
NEEDED = {
    "global_batch_size": "global batch size",
    "accelerators": "accelerator count",
    "accelerator_family": "named accelerator",
}


def _lacking(rows: pd.DataFrame) -> pd.DataFrame:
    """Per row, whether it lacks each of :data:`NEEDED` as :func:`measured` reads it."""
    out = {}
    for column in ("global_batch_size", "accelerators"):
        value = pd.to_numeric(rows[column], errors="coerce").astype(float).to_numpy()
        out[column] = ~(np.isfinite(value) & (value > 0))
    family = rows["accelerator_family"]
    out["accelerator_family"] = (family.isna() | (family.astype(str) == UNKNOWN_FAMILY)).to_numpy()
    return pd.DataFrame(out)


def _none_complete(lacking: pd.DataFrame) -> str:
    """Why none of a workload's closed-division results with a time can be planned from
    (each lacks one of :data:`NEEDED`: v0.7's MiniGo logs no global batch), "" where one
    can."""
    if not len(lacking) or not lacking.any(axis=1).all():
        return ""
    missing = [NEEDED[c] for c in NEEDED if lacking[c].any()]
    n = len(lacking)
    return (
        f"its {counted(n, 'closed-division result')} with a time here "
        f"{agreeing(n, 'lacks', 'each lack')} a {joined(missing, 'or')}, which the plan's "
        "model of time per sample needs"
    )


def flagged_left_out(scores: pd.DataFrame, workload: str) -> list[str]:
    """A sentence per result of ``workload`` left out of the plan because its logs
    contradict their folder (``log_flag``)."""
    if "log_flag" not in scores:
        return []
    rows = scores[is_log_flagged(scores).to_numpy(bool) & (scores["workload"] == workload)]
    return [
        f"{r.round} {r.org}/{r.system_id} left out of the plan: {r.log_flag}"
        for r in rows.itertuples(index=False)
    ]


ADDED = ("expected_samples", "reference_batch", "convergence", "era", "quality_target")


def _rcp_round(rounds: list[str], known: set[str]) -> dict[str, str]:
    """Per round, the round whose RCPs its results are counted with: its own, else the
    nearest later round's that has them (the rules the plan targets are the newest's),
    else the nearest earlier one's (v0.7's BERT, before any RCPs: v1.0's or later)."""
    ordered = sorted(known, key=round_key)
    out = {}
    for r in rounds:
        later = [k for k in ordered if round_key(k) >= round_key(r)]
        out[r] = later[0] if later else ordered[-1]
    return out


def _convergence(rows: pd.DataFrame) -> pd.DataFrame:
    """One workload's rows with ``ADDED`` (see the module docstring)."""
    b_ref = float(rows["global_batch_size"].median())
    bench = dict(zip(rows["round"], rows["benchmark"], strict=True))
    at_ref = {r: expected_samples(r, b, b_ref) for r, b in bench.items()}
    known = {r for r, v in at_ref.items() if math.isfinite(v) and v > 0}
    donor = _rcp_round(list(bench), known) if known else {}
    expected = np.array(
        [
            expected_samples(donor[r], b if donor[r] == r else bench[donor[r]], g)
            if known
            else math.nan
            for r, b, g in zip(
                rows["round"], rows["benchmark"], rows["global_batch_size"], strict=True
            )
        ],
        float,
    )
    if known and np.all(np.isfinite(expected) & (expected > 0)):
        at_ref = {r: at_ref[donor[r]] for r in bench}
        ratio = expected / np.array([at_ref[r] for r in rows["round"]])
    else:  # convergence not modelled: no samples to converge, one era, no factor
        at_ref, expected, ratio = dict.fromkeys(at_ref, 1.0), math.nan, 1.0
    era, eras, last = {}, 0, None
    for r in sorted(at_ref, key=round_key):
        value = at_ref[r]
        if last is not None and abs(math.log(value / last)) > ERA_STEP:
            eras += 1
        era[r], last = eras, value
    # said where rounds of two targets are pooled (no era step: none is fitted between
    # rounds no family bridges, and a target's step in samples has no RCP to size it)
    target = {r: round_target(r, b) for r, b in bench.items()}
    return rows.assign(
        expected_samples=expected,
        reference_batch=b_ref,
        convergence=ratio,
        era=rows["round"].map(era).astype(int),
        quality_target=rows["round"].map(target).astype(float),
    )


def node_sizes(scores: pd.DataFrame) -> dict[str, dict[str, int]]:
    """``{family: {"devices_per_node", "systems", "of"}}``: the devices per node most of a
    family's systems in ``scores`` ran (each system once, every division: a node's size
    is the hardware's, not the rules'), how many of its ``of`` systems with a whole
    number of devices per node ran it; a tie keeps ``DEFAULT_PER_NODE`` where it is one
    of the most common, else the larger. A family none of whose systems says its nodes
    is not in it (``gpuscale.planning.nodes``: it takes the default)."""
    if not {"accelerator_family", "nodes", "accelerators"} <= set(scores.columns):
        return {}
    keys = [c for c in ("round", "submitter", "system_name") if c in scores]
    rows = scores.drop_duplicates(keys) if keys else scores
    nodes = pd.to_numeric(rows["nodes"], errors="coerce").astype(float).to_numpy()
    devices = pd.to_numeric(rows["accelerators"], errors="coerce").astype(float).to_numpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        per = devices / nodes
    ok = np.isfinite(per) & (nodes > 0) & (per >= 1) & (per == np.round(per))
    family = rows["accelerator_family"].astype(object).to_numpy()
    ok &= pd.notna(family) & (family != UNKNOWN_FAMILY)
    out = {}
    for name in sorted({str(f) for f in family[ok]}):
        counts = pd.Series(per[ok & (family == name)]).astype(int).value_counts()
        most = counts[counts == counts.max()].index
        size = DEFAULT_PER_NODE if DEFAULT_PER_NODE in most else int(most.max())
        out[name] = {
            "devices_per_node": int(size),
            "systems": int(counts[size]),
            "of": int(counts.sum()),
        }
    return out
