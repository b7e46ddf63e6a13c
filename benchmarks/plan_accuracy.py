"""How well does ``gpuscale plan`` forecast MLPerf time to train? Scored like a forecast.

Usage::

    python benchmarks/plan_accuracy.py [--part forward|loso|speed|all] [--old REF]

(forward) **Forward in time**, the test that counts: the plan fitted (and its intervals
    calibrated) on the rounds before R predicts every result new in R whose workload was
    measured before (v3.1 from v3.0, ..., v5.0 from v3.0-v4.1).
(loso) **Leave one system out**: each result predicted from every other (its workload
    refitted without it), at its own round's level; the method was developed on this part
    only.

Each result is in one class (:data:`CLASSES`): measured (the family ran that count of the
workload before), between / beyond (it did not: inside / outside its measured counts), a
family's first results (it never ran the workload: its level borrowed through the other
workloads; or never seen at all: not plannable), a workload's first round (not plannable).
Per class: median absolute error, share within 10%, and the 80% intervals' coverage, beside
the baselines, computed on the same training systems: **lookup** (the nearest measured
count of the same workload and family, the median of the newest round that has it, time
scaled linearly to the count asked: at a measured count, its newest measurement),
**linear** (a straight line in log time against log count through the family's newest
medians at each count; one count: ideal scaling) and, with ``--old REF``, **the plan of
REF** (run in a subprocess on REF's own source and bundled data). Then the goals, each
met or not. The forward part writes ``benchmarks/results/plan_accuracy.json``, whose
table ``docs/plan-accuracy.md`` quotes (:func:`markdown`; ``tests/plan/test_plan_accuracy_doc.py``),
and ``gpuscale/data/plan_coverage.json``, each class's coverage, which ``gpuscale plan``
states beside its intervals (:func:`coverage_record`).

(speed) One ``gpuscale plan -w bert -a H100 -n 8`` and one with the default counts, new code
against REF's, run as paired subprocesses (REF's first, then this checkout's, five times):
CPU seconds (user + system) per command, and the ratio, written to
``benchmarks/results/plan_speed.json`` with the command, the date, the commit, the cores and
the load average before and after (``docs/speed.md`` quotes it). A run that fails stops it.
"""

from __future__ import annotations

import argparse
import datetime
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
from gpuscale.planning.cache import COVERAGE_FILE, bundled_version
from gpuscale.planning.calibrate import backtest, calibrated_fits, case_of
from gpuscale.planning.fits import speeds
from gpuscale.planning.predict import plannable, predict_point
from gpuscale.planning.systems import measured
from gpuscale.planning.workload import fit_workload
from gpuscale.tables.workloads import round_key

ROOT = Path(__file__).resolve().parents[1]
CLASSES = {
    "i": "measured: the family ran the count before",
    "ii_in": "between: not measured, inside the family's counts",
    "ii_out": "beyond: not measured, outside the family's counts",
    "iii": "a family's first results: it never ran the workload",
    "none": "a family's first results: never seen in any workload",
    "new workload": "a workload's first round",
}
PLANNED = ("i", "ii_in", "ii_out", "iii")
GOALS = {"never_run_vs_lookup": 0.30, "coverage": (70.0, 90.0), "min_cases": 10}
RESULTS = ROOT / "benchmarks" / "results" / "plan_accuracy.json"
SPEED_RESULTS = ROOT / "benchmarks" / "results" / "plan_speed.json"
COMMAND = "python benchmarks/plan_accuracy.py --part forward"


def lookup(train: pd.DataFrame, n: float) -> float:
    """The nearest measured count's newest-round median, scaled linearly to ``n``."""
    if train.empty:
        return math.nan
    counts = train["accelerators"].to_numpy(float)
    near = counts[np.argmin(np.abs(np.log(counts / n)))]
    at = train[train["accelerators"] == near]
    newest = max(at["round"], key=round_key)
    return float(at[at["round"] == newest]["time_to_train_min"].median()) * near / n


def linear(train: pd.DataFrame, n: float) -> float:
    """A straight line in ``log T`` against ``log N`` through the medians of the newest
    round at each count (least squares); one count: ideal scaling from it."""
    if train.empty:
        return math.nan
    points = []
    for count, at in train.groupby("accelerators"):
        newest = max(at["round"], key=round_key)
        minutes = at[at["round"] == newest]["time_to_train_min"].median()
        points.append((math.log(count), math.log(minutes)))
    x, y = np.array(points).T
    slope = np.polyfit(x, y, 1)[0] if len(x) > 1 else -1.0
    return float(np.exp(np.mean(y) + slope * (math.log(n) - np.mean(x))))


def with_baselines(cases: pd.DataFrame, systems: pd.DataFrame, forward: bool) -> pd.DataFrame:
    """``cases`` with ``lookup`` and ``linear`` from each case's training systems."""
    out = []
    for case in cases.itertuples(index=False):
        mine = systems[
            (systems["workload"] == case.workload) & (systems["accelerator_family"] == case.family)
        ]
        if forward:
            mine = mine[[round_key(r) < round_key(case.round) for r in mine["round"]]]
        else:
            mine = mine[
                ~(
                    (mine["round"] == case.round)
                    & (mine["system_name"] == case.system)
                    & (mine["submitter"] == case.submitter)
                    & (mine["accelerators"] == case.accelerators)
                )
            ]
        n = case.accelerators
        out.append({"lookup": lookup(mine, n), "linear": linear(mine, n)})
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
            if not plannable(trial, w, f):
                continue
        p = predict_point(trial, w, f, n, row.round)
        log_error = math.log(p["time_to_train_min"] / row.time_to_train_min)
        out.append(case_of(row) | p | {"log_error": log_error})
    return with_baselines(pd.DataFrame(out), systems, forward=False)


def _errors(frame: pd.DataFrame, method: str) -> pd.Series:
    return ((frame[method] / frame["measured"] - 1).abs() * 100).dropna()


def _stats(frame: pd.DataFrame, method: str) -> dict | None:
    """Median |error| % and share within 10% of ``method`` on ``frame``; None where it
    forecast nothing."""
    err = _errors(frame, method) if method in frame else pd.Series(dtype=float)
    if not len(err):
        return None
    return {
        "median_error_pct": round(float(err.median()), 2),
        "within_10_pct": round(float((err <= 10).mean() * 100), 1),
    }


def summary(cases: pd.DataFrame, methods: list[str]) -> dict[str, dict]:
    """Per class (and ``all planned``): cases, each method's :func:`_stats`, the plan's
    80% interval coverage % (None where the plan forecast nothing: not plannable)."""
    out = {}
    groups = [(k, cases[cases["count_class"] == k]) for k in CLASSES]
    groups.append(("all planned", cases[cases["count_class"].isin(PLANNED)]))
    for key, frame in groups:
        row: dict = {"class": CLASSES.get(key, key), "cases": len(frame)}
        row |= {m: _stats(frame, m) for m in methods}
        planned = frame[frame["plan"].notna()] if "plan" in frame else frame.iloc[:0]
        covered = (planned["time_to_train_min_low"] <= planned["measured"]) & (
            planned["measured"] <= planned["time_to_train_min_high"]
        )
        row["coverage_pct"] = round(float(covered.mean() * 100), 1) if len(planned) else None
        if len(planned):
            row["by_round"] = by_round(planned["round"], covered)
        out[key] = row
    return out


def by_round(rounds: pd.Series, covered: pd.Series) -> dict[str, dict]:
    """Per forecast round: its ``cases``, how many its 80% intervals ``covered`` and
    ``earlier``, the cases of the rounds before it (the forecasts its calibration had:
    none for the first transition, whose intervals are the prior's alone)."""
    out, earlier = {}, 0
    for name in sorted(rounds.unique(), key=round_key):
        mine = covered[rounds == name]
        out[name] = {"cases": len(mine), "covered": int(mine.sum()), "earlier": earlier}
        earlier += len(mine)
    return out


def _cell(stats: dict | None) -> str:
    if stats is None:
        return "-"
    return f"{stats['median_error_pct']:.1f}%; {stats['within_10_pct']:.0f}%"


def markdown(results: dict) -> str:
    """The table ``docs/plan-accuracy.md`` quotes, from the JSON this script writes."""
    lines = [
        "| class | cases | plan | lookup | linear | plan's 80% coverage |",
        "|---|---|---|---|---|---|",
    ]
    for row in results["classes"].values():
        cover = coverage_cell(row)
        cells = [row["class"], f"{row['cases']:,}", *(_cell(row.get(m)) for m in METHODS)]
        lines.append("| " + " | ".join([*cells, cover]) + " |")
    return "\n".join(lines) + "\n"


METHODS = ("plan", "lookup", "linear")


def coverage_cell(row: dict) -> str:
    """A class's coverage as the docs say it: the percentage where at least
    ``GOALS["min_cases"]`` forecasts rest on it, else that there are too few."""
    if row["coverage_pct"] is None:
        return "-"
    if row["cases"] < GOALS["min_cases"]:
        return f"fewer than {GOALS['min_cases']} forecasts"
    return f"{row['coverage_pct']:.1f}%"


def markdown_rounds(results: dict, key: str = "iii") -> str:
    """The table of class ``key``'s coverage by forecast round ``docs/plan-accuracy.md`` quotes:
    how many forecasts of the rounds before calibrated each round's intervals."""
    lines = [
        "| forecast round | forecasts before it (calibrating) | cases | covered |",
        "|---|---|---|---|",
    ]
    for name, row in results["classes"][key]["by_round"].items():
        cells = [name, f"{row['earlier']:,}", f"{row['cases']:,}", f"{row['covered']:,}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


# Run on REF's own source and bundled data, in a subprocess: each case planned by REF's
# plan fitted on the rounds before the case's round (its API until this change).
OLD_PLAN = """
import json, sys
from gpuscale import load_round
from gpuscale.planning.api import _model_for
from gpuscale.tables.workloads import round_key
scores = load_round().scores
out = []
for case in json.loads(sys.stdin.read()):
    train = scores[[round_key(r) < round_key(case["round"]) for r in scores["round"]]]
    try:
        model = _model_for(train, case["workload"], case["family"])
        row = model.predict([case["devices"]]).iloc[0]
        out.append([float(row.minutes), float(row.minutes_low), float(row.minutes_high)])
    except Exception:
        out.append(None)
print(json.dumps(out))
"""


def checkout(ref: str, into: Path) -> Path | None:
    """REF's ``src`` extracted into ``into`` (``git archive``); None where git cannot."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src/gpuscale"], capture_output=True
    )
    if archive.returncode:
        print(f"    ({ref} not run: {archive.stderr.decode().strip()[:200]})")
        return None
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "src"


def old_plan(cases: pd.DataFrame, source: Path) -> pd.DataFrame:
    """``cases`` with ``old`` (REF's minutes) and ``old_covered`` (its 80% interval)."""
    # REF's script takes the count as ``devices`` (its plan's name for it)
    wanted = (
        cases[["round", "workload", "family", "accelerators"]]
        .rename(columns={"accelerators": "devices"})
        .to_dict("records")
    )
    done = subprocess.run(
        [sys.executable, "-c", OLD_PLAN],
        input=json.dumps(wanted, default=int),
        capture_output=True,
        text=True,
        env=os.environ | {"PYTHONPATH": str(source)},
    )
    if done.returncode:
        print(f"    (the old plan did not run: {done.stderr.strip()[-300:]})")
        return cases
    found = json.loads(done.stdout)
    old = [f[0] if f else math.nan for f in found]
    covered = [bool(f and f[1] <= m <= f[2]) for f, m in zip(found, cases["measured"], strict=True)]
    return cases.assign(old=old, old_covered=covered)


def cpu_of(command: list[str], source: Path) -> float:
    """CPU seconds (user + system) of one command run with ``source`` first on the path."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        command, env=os.environ | {"PYTHONPATH": str(source)}, capture_output=True, text=True
    )
    if done.returncode != 0:  # a crash is not a fast plan
        said = done.stderr.strip().splitlines()[-1:] or ["no message"]
        sys.exit(f"{' '.join(command[2:])} ({source}) exited {done.returncode}: {said[0]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def speed(old_source: Path | None, old_ref: str = "", repeat: int = 5) -> dict:
    """One ``gpuscale plan`` command's CPU time, REF's then this checkout's, paired: what
    :data:`SPEED_RESULTS` holds."""
    commands = {
        "-w bert -a H100 -n 8": ["-w", "bert", "-a", "H100", "-n", "8"],
        "-w llama2_70b_lora -a H100 (6 counts)": ["-w", "llama2_70b_lora", "-a", "H100"],
    }
    new_source = ROOT / "src"
    # the code timed is the code at the start: its commit and the date are taken now
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    )
    load_before = os.getloadavg()
    print(f"one `gpuscale plan` command, CPU seconds (user + system), median of {repeat}:")
    cases = {}
    for name, args in commands.items():
        command = [sys.executable, "-m", "gpuscale", "plan", *args, "-f", "csv"]
        new, old = [], []
        for _ in range(repeat):
            if old_source is not None:
                old.append(cpu_of(command, old_source))
            new.append(cpu_of(command, new_source))
        case = {
            "runs_cpu_s": [round(t, 3) for t in new],
            "median_cpu_s": round(statistics.median(new), 2),
            "worst_cpu_s": round(max(new), 2),
            "under_1_s": max(new) < 1,
        }
        line = f"    {name}: {statistics.median(new):.2f} s"
        if old:
            ratio = statistics.median(o / n for o, n in zip(old, new, strict=True))
            case |= {
                "old_runs_cpu_s": [round(t, 3) for t in old],
                "old_median_cpu_s": round(statistics.median(old), 2),
                "old_over_new_median": round(ratio, 1),
            }
            line += f" (old {statistics.median(old):.2f} s; {ratio:.1f}x less CPU)"
        cases[f"gpuscale plan {name}"] = case
        print(
            line + f" -> under 1 s: {'met' if max(new) < 1 else 'NOT met'} (worst {max(new):.2f} s)"
        )
    return {
        "command": "python benchmarks/plan_accuracy.py --part speed"
        + (f" --old {old_ref}" if old_ref else ""),
        "old": old_ref or None,
        "date": date,
        "commit": commit.stdout.strip(),
        "cores": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "repeat": repeat,
        "cases": cases,
    }


def goals(table: dict) -> dict[str, dict]:
    """The issue's goals on the forward-in-time cases, each with its numbers and met."""
    measured = table["i"]
    never = [table[k] for k in ("ii_in", "ii_out")]
    out = {
        "measured no worse than the newest measurement there (the lookup; median)": {
            "plan": measured["plan"]["median_error_pct"],
            "lookup": measured["lookup"]["median_error_pct"],
            "met": measured["plan"]["median_error_pct"] <= measured["lookup"]["median_error_pct"],
        }
    }
    for row in never:
        lower = 1 - row["plan"]["median_error_pct"] / row["lookup"]["median_error_pct"]
        out[f"{row['class']}: >= 30% below the lookup's error"] = {
            "lower_pct": round(100 * lower, 1),
            "met": lower >= GOALS["never_run_vs_lookup"],
        }
    low, high = GOALS["coverage"]
    for key in PLANNED:
        row = table[key]
        if row["cases"] >= GOALS["min_cases"]:
            # and without the first transition, where no earlier forecast calibrates
            later = [r for r in row["by_round"].values() if r["earlier"]]
            out[f"{row['class']}: 80% intervals cover {low:g}-{high:g}%"] = {
                "coverage_pct": row["coverage_pct"],
                "forecasts": row["cases"],
                "met": low <= row["coverage_pct"] <= high,
                "calibrated_pct": round(
                    100 * sum(r["covered"] for r in later) / sum(r["cases"] for r in later), 1
                ),
            }
    return out


def coverage_record(results: dict) -> dict:
    """What ``gpuscale plan`` says of its intervals (``planning.cache.bundled_coverage``):
    per planned class the forward part's coverage and forecasts, stamped with the bundled
    data and model it was measured on."""
    classes = {
        k: {"coverage_pct": row["coverage_pct"], "forecasts": row["cases"]}
        for k, row in results["classes"].items()
        if k in PLANNED and row["coverage_pct"] is not None
    }
    return {
        "version": bundled_version(),
        "command": results["command"],
        "rounds": results["rounds"],
        "classes": classes,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=["forward", "loso", "speed", "all"], default="all")
    parser.add_argument("--old", default="", help="git ref of the plan to compare with")
    args = parser.parse_args()
    systems = measured(load_round().scores)
    with tempfile.TemporaryDirectory() as folder:
        old_source = checkout(args.old, Path(folder)) if args.old else None
        if args.part in ("forward", "all"):
            start = time.perf_counter()
            cases = forward(systems).rename(columns={"time_to_train_min": "plan"})
            methods = list(METHODS)
            if old_source is not None:
                cases = old_plan(cases, old_source)
                methods += ["old"] if "old" in cases else []
            table = summary(cases, methods)
            results = {
                "command": COMMAND,
                "rounds": sorted(systems["round"].unique(), key=round_key),
                "classes": table,
                "goals": goals(table),
            }
            RESULTS.write_text(json.dumps(results, indent=1) + "\n")
            COVERAGE_FILE.write_text(json.dumps(coverage_record(results), indent=1) + "\n")
            print(f"forward in time ({time.perf_counter() - start:.0f} s), wrote {RESULTS}:")
            print(markdown(results))
            print(markdown_rounds(results))
            for goal, said in results["goals"].items():
                print(f"    {goal}: {said}")
        if args.part in ("loso", "all"):
            start = time.perf_counter()
            cases = loso(systems).rename(columns={"time_to_train_min": "plan"})
            print(f"leave one system out ({time.perf_counter() - start:.0f} s):")
            print(markdown({"classes": summary(cases, list(METHODS))}))
        if args.part in ("speed", "all"):
            timed = speed(old_source, args.old if old_source is not None else "")
            SPEED_RESULTS.write_text(json.dumps(timed, indent=1) + "\n")
            print(f"wrote {SPEED_RESULTS}")


if __name__ == "__main__":
    main()
