"""Do gpuscale's 95% intervals cover? The earlier check: a simulation and real runs.

The coverage over the laws of issue 59 (two- and three-point epoch laws, continuous laws)
is ``benchmarks/interval_coverage.py``; this one is kept for its part (b), real runs.

Usage::

    python benchmarks/interval_real_check.py [--trials 400] [--boot 1000] [--draws 3]
                                           [--seed 0] [--skip-real] [--real-only] [--quick]

``--quick`` is 100 trials, 500 resamples and 1 draw (about a quarter of the time; its
coverage figures carry about twice the Monte Carlo error).

(a) Simulation with known truth. Each trial is a workload at one global batch, the way
    MLPerf submits one: three near-tied systems at 4 accelerators (paces within 3%; the
    reference is the slowest of them, the study's rule), one at 8 and one at 32, plus 20
    reference convergence runs (the RCPs) at the batch, every system with ``--runs`` runs
    (5 or 10) of which each fails with probability 2%. A run's time is its convergence
    times its pace: convergence either **normal** (coefficient of variation drawn in
    3-12%, as BERT, Llama2 and Stable Diffusion runs vary) or **epoch-quantised** (K-1,
    K or K+1 epochs over K, K in 3..8, probabilities drawn from Dirichlet(1, 3, 1), as
    RetinaNet's 3-5 epochs and Stable Diffusion's evaluation steps), pace log-normal with
    0.2-2% noise; or **one noisy** (every run at 4 epochs, but one of the three near-tied
    candidates varies by a further 2-6%: RetinaNet v5.0's H200, precise systems beside
    one that ran at another batch). The truth of a system is its expected official score
    (the olympic average of its runs, given that it scores), by Monte Carlo over 10,000
    submissions; the true E' is against the true score of the reference the study's rule
    chose (the slowest official score at 4 accelerators, biased upward by being chosen),
    counted over the systems other than the reference (its E' is 1 by definition). The
    trial is scored as gpuscale scores it (``scaling_table`` and ``bootstrap_intervals``
    on the tables the trial's runs make), and each system's interval covers or not.
    Baselines in the same trials: the previous method (the runs the olympic rule kept,
    resampled, their plain mean; the reference fixed) and the new resampling without the
    pooled spread.
    Goal: the nominal 95% interval covers 92-97% in every case.
(b) Real runs. For every bundled round and every result with 10 runs, ``--draws`` times:
    5 of its 10 runs drawn (every 10-run result of the round reduced alike, so the pools
    hold 5-run results too), scored by the olympic rule, analysed within each accelerator
    family; does the interval from 5 runs hold the official 10-run score (T), and the E'
    of the official scores? This tests the pooled spread against real run times
    (quantised convergence, slow outliers, real failures), not the simulation's model. It
    does not measure coverage exactly: the 10-run score is itself an estimate (its noise
    would lower the rate) and shares the 5 drawn runs (which raises it), and the 5 drawn
    runs come without replacement from 10, so they vary less than 5 new runs would.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from gpuscale import load_round
from gpuscale.analysis.metrics import scaling_table
from gpuscale.analysis.resampling import ResultRuns, official_score, olympic_rows
from gpuscale.analysis.score_intervals import bootstrap_intervals
from gpuscale.tables import RUNS_COLUMNS, SCORES_COLUMNS

BENCH = "simulated"  # a name with no RCP file: the trial's own RCP runs are the only ones
FAIL = 0.02
SYSTEMS = (
    ("ref-a", 4, 1.0),
    ("ref-b", 4, None),
    ("ref-c", 4, None),
    ("s8", 8, 0.6),
    ("s32", 32, 0.2),
)


class Workload:
    """One trial's convergence law and systems (pace in minutes per unit of convergence)."""

    def __init__(self, kind: str, rng: np.random.Generator) -> None:
        self.rng, self.kind = rng, kind
        # one candidate's runs vary by a further 2-6% where every other's vary by pace only
        self.noisy = {"ref-c": rng.uniform(0.02, 0.06)} if kind == "one noisy" else {}
        if kind == "normal":
            self.cv = rng.uniform(0.03, 0.12)
        elif self.noisy:  # every run at 4 epochs, as RetinaNet's H200 runs in v5.0
            self.atoms, self.cdf = np.array([4.0]), np.array([1.0])
        else:
            k = int(rng.integers(3, 9))
            self.atoms = np.array([k - 1, k, k + 1]) / k * 4.0
            self.cdf = np.cumsum(rng.dirichlet([1.0, 3.0, 1.0]))
        self.pace_cv = rng.uniform(0.002, 0.02)
        self.paces = {}
        for name, n, pace in SYSTEMS:
            base = pace if pace is not None else 1.0 + rng.uniform(-0.03, 0.03)
            self.paces[name] = base * (1.0 if n == 4 else rng.uniform(0.8, 1.2))

    def convergence(self, shape: tuple[int, ...]) -> np.ndarray:
        if self.kind == "normal":
            return np.clip(self.rng.normal(4.0, 4.0 * self.cv, shape), 0.4, None)
        u = self.rng.random(shape) * self.cdf[-1]
        return self.atoms[np.searchsorted(self.cdf, u)]

    def runs(self, name: str, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """(samples, times with inf for a failed run)."""
        samples = self.convergence(shape)
        times = samples * self.paces[name] * np.exp(self.rng.normal(0, self.pace_cv, shape))
        if name in self.noisy:
            times *= np.exp(self.rng.normal(0, self.noisy[name], shape))
        times[self.rng.random(shape) < FAIL] = np.inf
        return samples, times

    def truths(self, n: int) -> dict[str, float]:
        """Each system's expected official score given that it scores. A run's time is
        its pace times a noise of one law for all, and the olympic score is homogeneous
        of degree 1, so one Monte Carlo of a system at pace 1 (10,000 submissions) gives
        them all (a noisy system has a Monte Carlo of its own)."""
        unit = self._unit(n)
        units = {name: self._unit(n, extra) for name, extra in self.noisy.items()}
        return {name: units.get(name, unit) * pace for name, pace in self.paces.items()}

    def _unit(self, n: int, extra: float = 0.0) -> float:
        samples = self.convergence((10_000, n))
        times = samples * np.exp(self.rng.normal(0, self.pace_cv, samples.shape))
        if extra:
            times *= np.exp(self.rng.normal(0, extra, samples.shape))
        times[self.rng.random(samples.shape) < FAIL] = np.inf
        return float(np.nanmean(olympic_rows(times)))


def _tables(work: Workload, n: int) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """One simulated submission: scores and runs tables (all systems scoring)."""
    scores, runs, drawn = [], [], {}
    for name, accelerators, _ in SYSTEMS:
        while True:
            samples, times = work.runs(name, (n,))
            score = olympic_rows(times[None, :])[0]
            if np.isfinite(score):
                break
        drawn[name] = times
        scores.append(_score_row(name, accelerators, float(score)))
        runs += [
            _run_row(name, j, s, t) for j, (s, t) in enumerate(zip(samples, times, strict=True))
        ]
    rcp = work.convergence((20,))
    runs += [_run_row("rcp", j, s, s) for j, s in enumerate(rcp)]
    return pd.DataFrame(scores), pd.DataFrame(runs, columns=list(RUNS_COLUMNS)), drawn


def _score_row(name: str, accelerators: int, score: float) -> dict:
    row = dict.fromkeys(SCORES_COLUMNS)
    row.update(
        round="v9.9", org="Sim", submitter="Sim", system_id=name, system_name=name,
        division="closed", accelerator_family="X", accelerators=accelerators, nodes=1,
        benchmark=BENCH, workload=BENCH, runs=5, scaling_factor=1.0,
        time_to_train_min=score, global_batch_size=256.0, samples_to_converge=4.0,
    )  # fmt: skip
    return row


def _run_row(name: str, j: int, samples: float, minutes: float) -> dict:
    row = dict.fromkeys(RUNS_COLUMNS)
    ok = bool(np.isfinite(minutes))
    row.update(
        round="v9.9", org="Sim", submitter="Sim", system_id=name, benchmark=BENCH,
        workload=BENCH, run_file=f"result_{j}.txt", time_to_train_min=minutes if ok else np.nan,
        counted=ok, kept=ok, status="success" if ok else "aborted", global_batch_size=256.0,
        samples_to_converge=samples if ok else np.nan,
    )  # fmt: skip
    return row


def _previous(times: dict, n_boot: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The previous method's bootstrap scores: kept runs resampled, plain mean."""
    out = {}
    for name, t in times.items():
        ok = np.sort(t[np.isfinite(t)])
        failed = len(t) - len(ok)
        kept = ok[1 : len(ok) - (1 - failed)]
        out[name] = kept[rng.integers(0, len(kept), (n_boot, len(kept)))].mean(axis=1)
    return out


def _own_only(times: dict, n_boot: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """All runs resampled with the olympic rule, no pooled spread (percentile draws)."""
    out = {}
    for name, t in times.items():
        draws = olympic_rows(t[rng.integers(0, len(t), (n_boot, len(t)))])
        out[name] = draws[np.isfinite(draws)]
    return out


def _percentile_cover(draws: dict, truth: dict, scores: dict, ref: str) -> tuple[int, int]:
    """(T covered, E' covered) counts of a percentile method with a fixed reference."""
    t_hits = e_hits = 0
    true_ref = truth[ref]
    for name, n, _ in SYSTEMS:
        low, high = np.quantile(draws[name], [0.025, 0.975])
        t_hits += low <= truth[name] <= high
        if name == ref:
            continue
        k = min(len(draws[name]), len(draws[ref]))
        e = draws[ref][:k] / draws[name][:k] * 4 / n
        low, high = np.quantile(e, [0.025, 0.975])
        e_hits += low <= true_ref / truth[name] * 4 / n <= high
    return t_hits, e_hits


def simulate(kind: str, n: int, trials: int, n_boot: int, rng: np.random.Generator) -> dict:
    """Coverage of T and E' for the three methods over ``trials`` simulated workloads."""
    hits = {m: [0, 0] for m in ("gpuscale", "previous", "own runs only")}
    width = []
    for _ in range(trials):
        work = Workload(kind, rng)
        truth = work.truths(n)
        scores, runs, times = _tables(work, n)
        table = scaling_table(scores, BENCH, reference="study")
        ci = bootstrap_intervals(table, runs, n_boot=n_boot, seed=int(rng.integers(1 << 30)))
        true_ref = truth[str(table["reference_system_id"].iloc[0])]  # the chosen reference
        for row, low in zip(table.itertuples(index=False), ci.itertuples(index=False), strict=True):
            t_true = truth[row.system_id]
            e_true = true_ref / t_true * 4 / row.accelerators
            hits["gpuscale"][0] += low[0] <= t_true <= low[1]
            if row.system_id != row.reference_system_id:
                hits["gpuscale"][1] += low[4] <= e_true <= low[5]
            width.append(np.log(low[1] / low[0]))
        ref = str(table["reference_system_id"].iloc[0])
        official = dict(zip(table["system_id"], table["time_to_train_min"], strict=True))
        for method, draws in (
            ("previous", _previous(times, n_boot, rng)),
            ("own runs only", _own_only(times, n_boot, rng)),
        ):
            t_hit, e_hit = _percentile_cover(draws, truth, official, ref)
            hits[method][0] += t_hit
            hits[method][1] += e_hit
    total = trials * len(SYSTEMS)
    out = {m: (h[0] / total, h[1] / (total - trials)) for m, h in hits.items()}
    out["median width"] = float(np.exp(np.median(width)) - 1)
    return out


def real_check(draws: int, n_boot: int, rng: np.random.Generator) -> pd.DataFrame:
    """Part (b): per round, the share of 10-run results whose interval from 5 drawn runs
    holds the 10-run official T and E' (family reference), gpuscale and previous method."""
    rows = []
    for round_name in ("v3.0", "v3.1", "v4.0", "v4.1", "v5.0"):
        tables = load_round(round_name)
        scores = tables.scores[tables.scores["time_to_train_min"].notna()]
        ten = scores[scores["runs"] == 10]
        for workload in sorted(ten["workload"].unique()):
            rows += _real_workload(tables, scores, workload, draws, n_boot, rng)
    frame = pd.DataFrame(rows)
    return frame.groupby("round")[["T", "E'", "T previous", "E' previous"]].agg(["mean", "size"])


def _real_workload(tables, scores, workload, draws, n_boot, rng) -> list[dict]:
    mine = scores[scores["workload"] == workload]
    truth = scaling_table(mine, workload, reference="family", division="all")
    runs = tables.runs[tables.runs["workload"] == workload]
    out = []
    for _ in range(draws):
        picked, new_scores = _five_of_ten(runs, mine, rng)
        table = scaling_table(new_scores, workload, reference="family", division="all")
        if table.empty:
            continue
        ci = bootstrap_intervals(table, picked, n_boot=n_boot, seed=int(rng.integers(1 << 30)))
        merged = table.join(ci).merge(
            truth[["org", "system_id", "time_to_train_min", "normalized_efficiency"]],
            on=["org", "system_id"],
            suffixes=("", "_10"),
        )
        ten = set(
            zip(
                mine.loc[mine["runs"] == 10, "org"],
                mine.loc[mine["runs"] == 10, "system_id"],
                strict=True,
            )
        )
        merged = merged[
            [(o, i) in ten for o, i in zip(merged["org"], merged["system_id"], strict=True)]
        ]
        previous = _previous_real(merged, picked, n_boot, rng)
        for row, prev in zip(merged.itertuples(index=False), previous, strict=True):
            t10, e10 = row.time_to_train_min_10, row.normalized_efficiency_10
            out.append(
                {
                    "round": tables.scores["round"].iloc[0],
                    "T": row.time_to_train_min_ci_low <= t10 <= row.time_to_train_min_ci_high,
                    "E'": row.normalized_efficiency_ci_low
                    <= e10
                    <= row.normalized_efficiency_ci_high,
                    "T previous": prev[0] <= t10 <= prev[1],
                    "E' previous": prev[2] <= e10 <= prev[3],
                }
            )
    return out


def _five_of_ten(
    runs: pd.DataFrame, scores: pd.DataFrame, rng
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every 10-run result reduced to 5 random runs; scores recomputed from them."""
    parts, new = [], scores.copy()
    for key, group in runs.groupby(["org", "system_id", "benchmark"]):
        if len(group) == 10:
            group = group.iloc[np.sort(rng.choice(10, 5, replace=False))].copy()
            counted = group["counted"].astype(bool)
            group["kept"] = False
            result = ResultRuns(
                group.loc[counted, "time_to_train_min"].to_numpy(float),
                group.loc[counted, "samples_to_converge"].to_numpy(float),
                failed=int((~counted).sum()),
            )
            at = (
                (new["org"] == key[0]) & (new["system_id"] == key[1]) & (new["benchmark"] == key[2])
            )
            factor = new.loc[at, "scaling_factor"].fillna(1.0)
            new.loc[at, "time_to_train_min"] = official_score(result) * factor
        parts.append(group)
    new = new[new["time_to_train_min"].notna()]
    return pd.concat(parts), new


def _previous_real(merged: pd.DataFrame, runs: pd.DataFrame, n_boot: int, rng) -> list[tuple]:
    """The previous method's T and E' intervals for the merged rows (reference fixed)."""
    draws = {}
    for row in merged.itertuples(index=False):
        for org, sid in ((row.org, row.system_id), (row.reference_org, row.reference_system_id)):
            if (org, sid) in draws:
                continue
            mine = runs[(runs["org"] == org) & (runs["system_id"] == sid) & runs["counted"]]
            t = np.sort(mine["time_to_train_min"].to_numpy(float))
            failed = int(((runs["org"] == org) & (runs["system_id"] == sid)).sum()) - len(t)
            kept = t[1 : len(t) - (1 - failed)] if failed <= 1 else t[:0]
            draws[org, sid] = (
                kept[rng.integers(0, len(kept), (n_boot, len(kept)))].mean(axis=1)
                if len(kept) >= 2
                else np.full(n_boot, np.nan)
            )
    out = []
    for row in merged.itertuples(index=False):
        own, ref = draws[row.org, row.system_id], draws[row.reference_org, row.reference_system_id]
        t = np.nanquantile(own, [0.025, 0.975]) if np.isfinite(own).any() else (np.nan,) * 2
        ratio = ref / own * row.reference_accelerators / row.accelerators
        e = np.nanquantile(ratio, [0.025, 0.975]) if np.isfinite(ratio).any() else (np.nan,) * 2
        out.append((*t, *e))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=400)
    parser.add_argument("--boot", type=int, default=1000)
    parser.add_argument("--draws", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-real", action="store_true")
    parser.add_argument("--real-only", action="store_true", help="part (b) alone")
    parser.add_argument("--quick", action="store_true", help="100 trials, 500 resamples, 1 draw")
    args = parser.parse_args()
    if args.quick:
        args.trials, args.boot, args.draws = 100, 500, 1
    rng = np.random.default_rng(args.seed)
    if args.real_only:
        print(f"(b) real runs: 5 of 10 drawn, {args.draws} draws per round; share of "
              "intervals holding the 10-run official value")  # fmt: skip
        print(real_check(args.draws, args.boot, rng).to_string(float_format=lambda v: f"{v:.1%}"))
        return
    print(f"(a) simulation: {args.trials} trials x {len(SYSTEMS)} systems per case, "
          f"{args.boot} resamples; nominal 95%, goal 92-97%")  # fmt: skip
    head = ("case", "T", "E'", "width", "previous T/E'", "own only T/E'")
    print(f"{head[0]:<22}{head[1]:>8}{head[2]:>8}{head[3]:>8}  {head[4]:>15}  {head[5]:>15}  goal")
    met = True
    for kind in ("normal", "quantised", "one noisy"):
        for n in (5, 10):
            start = time.perf_counter()
            res = simulate(kind, n, args.trials, args.boot, rng)
            t_cov, e_cov = res["gpuscale"]
            ok = all(0.92 <= c <= 0.97 for c in (t_cov, e_cov))
            met &= ok
            prev, own = res["previous"], res["own runs only"]
            print(
                f"{kind + f', {n} runs':<22}{t_cov:>8.1%}{e_cov:>8.1%}{res['median width']:>+8.1%}"
                f"  {prev[0]:>7.1%}/{prev[1]:<7.1%}  {own[0]:>7.1%}/{own[1]:<7.1%}  "
                f"{'met' if ok else 'NOT met'} ({time.perf_counter() - start:.0f} s)"
            )
    print(f"goal (92-97% in every case): {'MET' if met else 'NOT met'}")
    if not args.skip_real:
        print(f"\n(b) real runs: 5 of 10 drawn, {args.draws} draws per round; share of "
              "intervals holding the 10-run official value")  # fmt: skip
        print(real_check(args.draws, args.boot, rng).to_string(float_format=lambda v: f"{v:.1%}"))


if __name__ == "__main__":
    main()
