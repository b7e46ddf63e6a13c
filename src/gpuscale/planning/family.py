"""One accelerator family on one workload: its measured systems and the fitted model.

:func:`systems_of` selects what the model is fitted on (closed division, a valid time,
republished copies counted once: only rows whose ``round`` is their ``first_round``);
:func:`fit_family` fits it (``gpuscale.planning.model``) and :meth:`FamilyModel.predict`
gives time to train, its interval and the batch at any device count.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from gpuscale.analysis.decompose import expected_samples, round_rcp_model
from gpuscale.planning import model as m
from gpuscale.tables.republished import counted_once
from gpuscale.tables.workloads import round_key


class PlanError(ValueError):
    """Nothing in the data supports an answer; the message says why."""


def systems_of(scores: pd.DataFrame, workload: str, family: str) -> pd.DataFrame:
    """The family's measured systems of a workload that the model may use: closed
    division, a valid time, and a result republished across the loaded rounds once (a
    copy is dropped when the round it first appeared in is loaded too)."""
    loaded = set(scores["round"].astype(str))
    rows = counted_once(scores)  # one result under two system names in a round: once
    rows = rows[(rows["workload"] == workload) & (rows["accelerator_family"] == family)]
    if "division" in rows:
        rows = rows[rows["division"] == "closed"]
    if "first_round" in rows:  # a copy whose first round is not loaded is kept (once)
        first = rows["first_round"].astype(object)
        copy = (rows["round"] != first) & first.isin(loaded)
        rows = rows[~copy.to_numpy(bool)]
    time = pd.to_numeric(rows["time_to_train_min"], errors="coerce")
    n = pd.to_numeric(rows["accelerators"], errors="coerce")
    return rows[np.isfinite(time) & (time > 0) & np.isfinite(n) & (n > 0)].reset_index(drop=True)


def _expected(rows: pd.DataFrame) -> np.ndarray | None:
    """E(B) of each row from its round's RCPs; None when any row has none."""
    values = np.array(
        [
            expected_samples(str(r), str(b), float(g))
            for r, b, g in zip(
                rows["round"],
                rows["benchmark"],
                pd.to_numeric(rows["global_batch_size"], errors="coerce"),
                strict=True,
            )
        ],
        float,
    )
    return values if np.all(np.isfinite(values) & (values > 0)) else None


@dataclass(frozen=True, slots=True)
class FamilyModel:
    """The fitted model of one family and workload (see ``gpuscale.planning.model``)."""

    family: str
    workload: str
    benchmark: str
    systems: pd.DataFrame
    choice: m.Choice
    batch: tuple[float, float]  # (a, b) of log B = a + b log N
    rcp: object | None  # ConvergenceModel of the newest round, None: not modelled
    latest_round: str
    sigma: float
    fit_log_tau: tuple[float, ...] = ()  # the systems' log minutes per expected sample
    anchored: bool = True  # correct the law by the nearest measured count (model.anchor)
    log_shift: float = 0.0  # borrowed from another workload: log(time ratio)
    borrowed_from: str = ""  # "" or the family whose workload times are scaled

    @property
    def measured(self) -> np.ndarray:
        return self.systems["accelerators"].to_numpy(float)

    def global_batch(self, devices: np.ndarray) -> np.ndarray:
        """Between measured counts, log-linear between the newest round's median batch at
        each (submitters keep their batch at a count); beyond them, the edge's batch
        scaled by the fitted ``N^b``."""
        a, b = self.batch
        n = np.asarray(devices, float)
        rows = self.systems
        batch = pd.to_numeric(rows["global_batch_size"], errors="coerce").to_numpy(float)
        ok = np.isfinite(batch) & (batch > 0)
        if not ok.any():
            return np.exp(a + b * np.log(n))
        rounds = [str(r) for r, k in zip(rows["round"], ok, strict=True) if k]
        counts, median = m.per_count(
            rows["accelerators"].to_numpy(float)[ok], np.log(batch[ok]), rounds, "median"
        )
        inside = np.interp(np.log(n), np.log(counts), median)
        low, high = np.log(counts[0]), np.log(counts[-1])
        beyond = np.minimum(np.log(n) - low, 0) + np.maximum(np.log(n) - high, 0)
        return np.exp(inside + b * beyond)

    def expected_samples(self, batch: np.ndarray) -> np.ndarray:
        if self.rcp is None:
            return np.full(len(batch), math.nan)
        return np.array([self.rcp.samples(float(x)) for x in batch])

    def predict(
        self, devices: list[int] | np.ndarray, round_name: str | None = None
    ) -> pd.DataFrame:
        """Minutes, 80% interval, batch and E(B) at each count, at the level of
        ``round_name`` (default: the newest fitted round)."""
        n = np.asarray(devices, float)
        batch = self.global_batch(n)
        e = self.expected_samples(batch)
        scale = e if self.rcp is not None else np.ones(len(n))
        log_tau = self.choice.fitted.log_tau(n, round_name or self.latest_round)
        if self.anchored and self.fit_log_tau:
            rounds = [str(r) for r in self.systems["round"]]
            log_tau = log_tau + m.anchor(
                self.choice.fitted, self.measured, np.array(self.fit_log_tau), rounds, n
            )
        minutes = np.exp(log_tau + self.log_shift) * scale
        widen = m.widening(n, self.measured)
        half = m.Z80 * self.sigma * widen
        extrapolated = (widen > 1) | bool(self.borrowed_from)
        return pd.DataFrame(
            {
                "devices": n.astype(int),
                "minutes": minutes,
                "minutes_low": minutes * np.exp(-half),
                "minutes_high": minutes * np.exp(half),
                "global_batch": np.round(batch),  # whole samples; E(B) used the fit
                "expected_samples": e,
                "log_tau": log_tau,
                "extrapolated": extrapolated,
            }
        )

    def nearest(self, devices: int, k: int = 3) -> list[dict]:
        """The measured systems at the count nearest ``devices`` (log distance), newest
        round first, fastest first."""
        rows = self.systems
        gap = np.abs(np.log(rows["accelerators"].to_numpy(float) / devices))
        near = rows[np.isclose(gap, gap.min())].copy()
        near["_key"] = [round_key(str(r)) for r in near["round"]]
        near = near.sort_values(["_key", "time_to_train_min"], ascending=[False, True]).head(k)
        return [
            {
                "round": str(r.round),
                "submitter": str(r.submitter),
                "system": str(r.system_name),
                "devices": int(r.accelerators),
                "minutes": round(float(r.time_to_train_min), 3),
            }
            for r in near.itertuples(index=False)
        ]


def fit_family(
    scores: pd.DataFrame,
    workload: str,
    family: str,
    laws: tuple[str, ...] = m.LAWS,
    anchored: bool = True,
) -> FamilyModel | None:
    """The model of one family on one workload; None without a measured system."""
    rows = systems_of(scores, workload, family)
    if rows.empty:
        return None
    n = rows["accelerators"].to_numpy(float)
    t = rows["time_to_train_min"].to_numpy(float)
    rounds = [str(r) for r in rows["round"]]
    latest = max(rounds, key=round_key)
    benchmark = str(rows.loc[[round_key(r) for r in rounds].index(round_key(latest)), "benchmark"])
    e = _expected(rows)
    rcp = None
    if e is not None:
        rcp = round_rcp_model(latest, benchmark)
    if rcp is None:
        e = None
    log_tau = np.log(t / e) if e is not None else np.log(t)
    choice = m.choose_law(n, log_tau, rounds, laws)
    batch = m.fit_batch(n, pd.to_numeric(rows["global_batch_size"], errors="coerce").to_numpy())
    if not np.isfinite(batch[0]):
        rcp = None  # no batch: samples to converge cannot be predicted
        if e is not None:
            log_tau = np.log(t)
            choice = m.choose_law(n, log_tau, rounds, laws)
    errors = choice.errors
    if anchored:
        errors = m.loo_errors(choice.fitted.law, n, log_tau, rounds, anchored=True)
    return FamilyModel(
        family=family,
        workload=workload,
        benchmark=benchmark,
        systems=rows,
        choice=choice,
        batch=batch,
        rcp=rcp,
        latest_round=latest,
        sigma=m.sigma_of(errors),
        fit_log_tau=tuple(float(x) for x in log_tau),
        anchored=anchored,
    )


BORROW_SIGMA = 0.15  # added (in quadrature) when times come from another workload


def borrow(scores: pd.DataFrame, workload: str, family: str) -> FamilyModel:
    """A model for a family that never ran ``workload``: the family with most systems of
    it (``donor``), scaled by the family's time ratio to the donor on the workload both ran
    with most of the family's systems. PlanError when no such pair exists."""
    donors = (
        scores[(scores["workload"] == workload) & (scores["accelerator_family"] != family)]
        .groupby("accelerator_family")
        .size()
        .sort_values(ascending=False)
    )
    own = scores[scores["accelerator_family"] == family]
    if own.empty:
        raise PlanError(f"no system of accelerator family {family} in this data")
    for donor in donors.index:
        shared = own[own["workload"] != workload]["workload"].value_counts()
        for other in shared.index:
            donor_other = fit_family(scores, str(other), str(donor))
            mine = systems_of(scores, str(other), family)
            if donor_other is None or mine.empty:
                continue
            donor_target = fit_family(scores, workload, str(donor))
            if donor_target is None:
                continue
            ratios = []
            for r in mine.itertuples(index=False):
                pred = donor_other.predict([int(r.accelerators)], str(r.round))
                ratios.append(math.log(float(r.time_to_train_min) / float(pred["minutes"][0])))
            spread = float(np.std(ratios)) if len(ratios) > 1 else BORROW_SIGMA
            sigma = math.sqrt(donor_target.sigma**2 + BORROW_SIGMA**2 + spread**2)
            return replace(
                donor_target,
                family=family,
                sigma=sigma,
                log_shift=float(np.mean(ratios)),
                borrowed_from=f"{donor} (time ratio {family}/{donor} on {other}: "
                f"{math.exp(float(np.mean(ratios))):.2f} over {len(ratios)} system(s))",
            )
    raise PlanError(
        f"no {family} system ran {workload}, and no family that ran it shares another "
        f"workload with {family}: nothing supports a plan"
    )
