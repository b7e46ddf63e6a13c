"""CPU and wall time of the default report (``gpuscale report``) against a baseline's.

Usage::

    python benchmarks/report.py [--repeat 5] [--baseline 54e9373]

Times ``python -m gpuscale.cli report --out DIR`` (bundled v4.1, the study's four
workloads) in a fresh process each time, so imports count, for three cases run in
alternation within each repeat (the order rotating), so a busy period hits every case:

* ``baseline``: the code of ``--baseline`` (a git revision, exported with ``git archive``
  into a temporary folder), a first run with an empty cache folder: by default
  ``54e9373``, main before the report's first screen answered (issue 57: one
  recommendation per workload, the like-with-like overview, each workload's four panels
  drawn by default); ``e197d44`` is main before the default report drew only the
  figures a first reading needs (issue 37), ``fc7273b`` main before issue 37;
* ``baseline, cached``: the baseline's second report of the same data, its cache
  filled by a run before the first repeat (a revision without a cache: a first run
  again);
* ``now, first run``: this checkout's code (copied at the start) with an empty cache
  folder (what a new user meets: the default figures drawn, every analysis run);
* ``now, cached``: this checkout's code with the cache an earlier report of the same
  data and code left (``~/.cache/gpuscale/report``; a second ``gpuscale report``).

Both copies are byte-compiled first, as an installed package is. CPU is user + system
time of the process and every worker it waited for (``RUSAGE_CHILDREN``). Printed: every
run, each case's median and best (least) CPU and wall time, and the median over repeats
of each case's ratio to the baseline of the same repeat (a cached case's to the
baseline's cached run). Targets on a quiet 2-core machine: 4 s of CPU and 3 s wall. The
load average is
printed with them: on a busy machine both times grow (wall most: other processes take the
cores), the ratios less, and the best of the repeats is the nearest to a quiet machine.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET_CPU_S = 4.0
TARGET_WALL_S = 3.0
RESULTS = ROOT / "benchmarks" / "results" / "report_speed.json"
BEGIN, END = "<!-- report_speed.json: begin -->\n", "<!-- report_speed.json: end -->"


def export_baseline(revision: str, into: Path) -> Path:
    """The ``src`` folder of ``revision``, with this checkout's compiled line scanner
    copied in where its C source is unchanged (both then read logs the same way)."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", revision, "src"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    scan_c = "src/gpuscale/mlperf/_scan.c"
    same_c = subprocess.run(
        ["git", "-C", str(ROOT), "diff", "--quiet", revision, "--", scan_c], check=False
    )
    if same_c.returncode == 0:
        for built in (ROOT / "src/gpuscale/mlperf").glob("_scan*.so"):
            shutil.copy(built, into / "src/gpuscale/mlperf" / built.name)
    return into / "src"


def timed_report(src: Path, cache_home: Path, out: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one ``gpuscale report`` by the code in ``src``."""
    env = {**os.environ, "PYTHONPATH": str(src), "XDG_CACHE_HOME": str(cache_home)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "gpuscale.cli", "report", "--out", str(out)],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--baseline",
        default="54e9373",
        help="git revision to compare with (54e9373: main before issue 57's first screen; "
        "e197d44: main before the report's figures were cut; fc7273b: before issue 37)",
    )
    parser.add_argument(
        "--out", type=Path, default=RESULTS, help="where the figures are written (JSON)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        (tmp / "old").mkdir()
        old_src = export_baseline(args.baseline, tmp / "old")
        # A copy: the code timed stays the same while the benchmark runs (an edit would
        # also change the cache's code fingerprint: every cached figure a miss).
        new_src = tmp / "new" / "src"
        shutil.copytree(ROOT / "src", new_src, ignore=shutil.ignore_patterns("__pycache__"))
        # Byte-compiled as `pip install` leaves a package: with PYTHONDONTWRITEBYTECODE
        # set (as on the shared machine) every run would compile each module again
        # (~0.2 CPU-s per process), a cost no installed copy pays.
        for src in (old_src, new_src):
            compileall.compile_dir(src, quiet=1)
        warm_home, old_warm_home = tmp / "warm-cache", tmp / "old-warm-cache"
        timed_report(new_src, warm_home, tmp / "warm-up")  # fills the cached case's cache
        timed_report(old_src, old_warm_home, tmp / "warm-up")  # and the baseline's

        def case(name: str) -> tuple[float, float]:
            out = tmp / "out"
            shutil.rmtree(out, ignore_errors=True)
            if name == "baseline":  # a first run too (e197d44 has a cache: kept, it
                # would make every baseline run after the first a cached one)
                shutil.rmtree(tmp / "old-cache", ignore_errors=True)
                return timed_report(old_src, tmp / "old-cache", out)
            if name == "baseline, cached":
                return timed_report(old_src, old_warm_home, out)
            if name == "now, first run":
                cold = tmp / "cold-cache"
                shutil.rmtree(cold, ignore_errors=True)
                return timed_report(new_src, cold, out)
            return timed_report(new_src, warm_home, out)

        names = ["baseline", "baseline, cached", "now, first run", "now, cached"]
        runs: dict[str, list[tuple[float, float]]] = {n: [] for n in names}
        print(f"gpuscale report (v4.1, study workloads), fresh processes, {os.cpu_count()} cores")
        print(f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
        for r in range(args.repeat):
            order = names[r % len(names) :] + names[: r % len(names)]
            for name in order:
                runs[name].append(case(name))
            print(
                f"  repeat {r + 1}: "
                + "; ".join(f"{n} {runs[n][-1][0]:.2f} CPU-s {runs[n][-1][1]:.2f} s" for n in names)
            )
        load_end = os.getloadavg()
        print(f"load average at end: {', '.join(f'{x:.1f}' for x in load_end)}")
        for name in names:  # a cached run against the baseline's cached run
            base = runs["baseline, cached" if name.endswith("cached") else "baseline"]
            print(_summary(name, runs[name], base))
        figures = {
            "command": f"python benchmarks/report.py --repeat {args.repeat} --baseline "
            f"{args.baseline}",
            "baseline": args.baseline,
            "cores": os.cpu_count(),
            "load_average_at_end": [round(x, 1) for x in load_end],
            "target": {"cpu_s": TARGET_CPU_S, "wall_s": TARGET_WALL_S},
            "cases": {n: _figures(runs[n]) for n in names},
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(figures, indent=1) + "\n")
        print(f"wrote {args.out}")


def _figures(runs: list[tuple[float, float]]) -> dict[str, float | list[list[float]]]:
    """One case's runs and its median and best CPU and wall seconds."""
    return {
        "runs": [[round(c, 2), round(w, 2)] for c, w in runs],
        "median_cpu_s": round(statistics.median(c for c, _ in runs), 2),
        "median_wall_s": round(statistics.median(w for _, w in runs), 2),
        "best_cpu_s": round(min(c for c, _ in runs), 2),
        "best_wall_s": round(min(w for _, w in runs), 2),
    }


def markdown(figures: dict) -> str:
    """The table ``docs/speed.md`` quotes: each case's median and best, the target."""
    lines = [
        f"`{figures['command']}` ({figures['cores']} cores, load average at the end "
        f"{figures['load_average_at_end'][0]:g}):",
        "",
        "| case | median CPU-s | median wall s | best CPU-s | best wall s |",
        "|---|---|---|---|---|",
    ]
    for name, c in figures["cases"].items():
        lines.append(
            f"| {name} | {c['median_cpu_s']:.2f} | {c['median_wall_s']:.2f} | "
            f"{c['best_cpu_s']:.2f} | {c['best_wall_s']:.2f} |"
        )
    return "\n".join(lines) + "\n"


def _summary(name: str, runs: list[tuple[float, float]], base: list[tuple[float, float]]) -> str:
    """One case's line: median and best CPU and wall, ratios to the baseline, target."""
    cpu = statistics.median(c for c, _ in runs)
    wall = statistics.median(w for _, w in runs)
    best_cpu, best_wall = min(c for c, _ in runs), min(w for _, w in runs)
    line = (
        f"{name:>15}: median {cpu:.2f} CPU-s, {wall:.2f} s wall; "
        f"best {best_cpu:.2f} CPU-s, {best_wall:.2f} s wall"
    )
    if runs is base:
        return line
    cpu_ratio = statistics.median(c / b for (c, _), (b, _) in zip(runs, base, strict=True))
    wall_ratio = statistics.median(w / b for (_, w), (_, b) in zip(runs, base, strict=True))
    line += f"; against the baseline CPU x{cpu_ratio:.2f}, wall x{wall_ratio:.2f}"

    def met(c: float, w: float) -> str:
        return "met" if c <= TARGET_CPU_S and w <= TARGET_WALL_S else "NOT met"

    return (
        line + f"; target {TARGET_CPU_S:g} CPU-s / {TARGET_WALL_S:g} s: "
        f"median {met(cpu, wall)}, best {met(best_cpu, best_wall)}"
    )


if __name__ == "__main__":
    main()
