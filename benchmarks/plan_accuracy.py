"""How well does ``gpuscale plan`` predict MLPerf time to train? Scored like a forecast.

Usage::

    python benchmarks/plan_accuracy.py [--skip-a]

(a) Leave one system out within each round: per round, workload and accelerator family
    (three systems or more, republished copies counted once), each system is predicted by
    the plan fitted on the round's other systems of its family.
(b) Forward in time: the plan fitted on the rounds before R predicts every new system of
    R (``first_round == R``) whose family and workload were seen before: v4.0 from v3.x,
    v4.1 from <= v4.0, v5.0 from <= v4.1.

Both print the median absolute error, the share within 10% and 25%, and the plan's
80%-interval coverage, beside four baselines computed on the same training systems:
**nearest** (the nearest measured device count, its newest round's median time, scaled
linearly), **ideal** (the smallest count's, scaled linearly), **amdahl** and **usl**
(``gpuscale.analysis.scaling_laws`` fitted on time against devices, all training systems).
Then the issue's goals (median error <= 10% on (b), better than every baseline; coverage
70-90%) and whether each is met.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import time

import numpy as np
import pandas as pd

BASELINES = ("nearest", "ideal", "amdahl", "usl")
COVERED = {"plan": "covered", "law_only": "law_only_covered"}


def _newest_median(rows: pd.DataFrame, n: float) -> float:
    """Median time of the newest round's systems at count ``n``."""
    from gpuscale.tables.workloads import round_key

    at = rows[rows["accelerators"] == n]
    newest = max(at["round"].astype(str), key=round_key)
    return float(at[at["round"] == newest]["time_to_train_min"].median())


def baselines(train: pd.DataFrame, n: float) -> dict[str, float]:
    """The four baselines' predicted minutes at ``n`` from ``train`` (one family)."""
    from gpuscale.analysis.scaling_laws import fit_law

    counts = train["accelerators"].to_numpy(float)
    near = counts[np.argmin(np.abs(np.log(counts / n)))]
    small = counts.min()
    out = {
        "nearest": _newest_median(train, near) * near / n,
        "ideal": _newest_median(train, small) * small / n,
    }
    ordered = train.sort_values("accelerators")
    x = ordered["accelerators"].to_numpy(float)
    t = ordered["time_to_train_min"].to_numpy(float)
    for law, params in (("amdahl", 2), ("usl", 3)):
        out[law] = math.nan
        if len(np.unique(x)) >= params:
            with contextlib.suppress(RuntimeError, ValueError):
                out[law] = float(fit_law(law, x, t, x[0])([n])[0])
    return out


def _row(model, law_only, system, train: pd.DataFrame, round_name: str | None) -> dict:
    n = float(system.accelerators)
    pred = model.predict([int(n)], round_name)
    bare = law_only.predict([int(n)], round_name)
    actual = float(system.time_to_train_min)
    row = {
        "round": str(system.round),
        "workload": str(system.workload),
        "family": str(system.accelerator_family),
        "devices": int(n),
        "measured": actual,
        "plan": float(pred["minutes"][0]),
        "covered": bool(pred["minutes_low"][0] <= actual <= pred["minutes_high"][0]),
        "law_only": float(bare["minutes"][0]),
        "law_only_covered": bool(bare["minutes_low"][0] <= actual <= bare["minutes_high"][0]),
        "extrapolated": bool(pred["extrapolated"][0]),
        "law": model.choice.fitted.law,
    }
    return row | baselines(train, n)


def part_a(scores: pd.DataFrame) -> pd.DataFrame:
    from gpuscale.planning.family import fit_family, systems_of

    rows = []
    for (round_name, workload, family), _ in scores.groupby(
        ["round", "workload", "accelerator_family"]
    ):
        systems = systems_of(scores[scores["round"] == round_name], workload, family)
        if len(systems) < 3:
            continue
        for i, system in enumerate(systems.itertuples(index=False)):
            rest = systems.drop(index=i)
            model = fit_family(rest, workload, family)
            if model is not None:
                bare = fit_family(rest, workload, family, anchored=False)
                rows.append(_row(model, bare, system, rest, None))
    return pd.DataFrame(rows)


def part_b(scores: pd.DataFrame) -> pd.DataFrame:
    from gpuscale.planning.family import fit_family, systems_of
    from gpuscale.tables.workloads import round_key

    rows = []
    rounds = sorted(scores["round"].astype(str).unique(), key=round_key)
    for target in rounds:
        if round_key(target) < (4, 0):
            continue
        train_scores = scores[[round_key(str(r)) < round_key(target) for r in scores["round"]]]
        new = scores[(scores["round"] == target) & (scores["first_round"] == target)]
        for (workload, family), _ in new.groupby(["workload", "accelerator_family"]):
            model = fit_family(train_scores, workload, family)
            if model is None:
                continue  # not seen before
            bare = fit_family(train_scores, workload, family, anchored=False)
            train = systems_of(train_scores, workload, family)
            for system in systems_of(new, workload, family).itertuples(index=False):
                rows.append(_row(model, bare, system, train, None))
    return pd.DataFrame(rows)


def summary(frame: pd.DataFrame) -> pd.DataFrame:
    out = []
    for method in ("plan", "law_only", *BASELINES):
        err = (frame[method] / frame["measured"] - 1).abs().dropna() * 100
        out.append(
            {
                "method": method,
                "predictions": len(err),
                "median_abs_err_pct": float(err.median()),
                "within_10pct": float((err <= 10).mean() * 100),
                "within_25pct": float((err <= 25).mean() * 100),
                "coverage_80pct": float(frame[COVERED[method]].mean() * 100)
                if method in COVERED
                else math.nan,
            }
        )
    return pd.DataFrame(out)


def _print(title: str, frame: pd.DataFrame) -> pd.DataFrame:
    table = summary(frame)
    print(title)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.1f}"))
    ext = frame[frame["extrapolated"]]
    if len(ext):
        err = (ext["plan"] / ext["measured"] - 1).abs() * 100
        print(
            f"    of which extrapolated: {len(ext)}, median error {err.median():.1f}%, "
            f"coverage {ext['covered'].mean() * 100:.0f}%"
        )
    print(
        "    laws chosen: " + ", ".join(f"{k} {v}" for k, v in frame["law"].value_counts().items())
    )
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-a", action="store_true", help="only part (b)")
    args = parser.parse_args()
    from gpuscale import load_round

    scores = load_round().scores
    if not args.skip_a:
        start = time.perf_counter()
        frame_a = part_a(scores)
        _print(
            f"(a) leave one system out within each round ({time.perf_counter() - start:.1f} s):",
            frame_a,
        )
    start = time.perf_counter()
    frame_b = part_b(scores)
    table = _print(
        f"(b) forward in time, each round from the rounds before it "
        f"({time.perf_counter() - start:.1f} s):",
        frame_b,
    )
    per_round = frame_b.assign(err=(frame_b["plan"] / frame_b["measured"] - 1).abs() * 100)
    print(
        "    per round: "
        + ", ".join(
            f"{r} {len(g)} predictions, median {g['err'].median():.1f}%, "
            f"coverage {g['covered'].mean() * 100:.0f}%"
            for r, g in per_round.groupby("round")
        )
    )
    plan = table.set_index("method")
    median = plan.loc["plan", "median_abs_err_pct"]
    best = plan.loc[list(BASELINES), "median_abs_err_pct"].min()
    coverage = plan.loc["plan", "coverage_80pct"]
    print("goals on (b):")
    print(
        f"    median absolute error <= 10%: {median:.1f}% -> {'met' if median <= 10 else 'NOT met'}"
    )
    print(
        f"    better than every baseline (best {best:.1f}%): "
        f"{'met' if median < best else 'NOT met'}"
    )
    print(
        f"    80% interval coverage in 70-90%: {coverage:.0f}% -> "
        f"{'met' if 70 <= coverage <= 90 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
