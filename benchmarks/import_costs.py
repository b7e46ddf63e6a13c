"""What importing each library gpuscale keeps off its fast paths costs, in a fresh
interpreter beyond its start-up.

Usage::

    python benchmarks/import_costs.py [--repeat 7] [--out FILE]

Each round runs ``python -c pass`` and then ``python -c "import X"`` for every library of
:data:`LIBRARIES`, back to back, so a busy period hits them all; a library's cost in a
round is its run less that round's ``pass`` run, in CPU seconds (user + system of the
child, ``RUSAGE_CHILDREN``) and wall seconds. The medians over the rounds are the figures.
Writes ``benchmarks/results/import_costs.json`` (or ``--out``): every run, the medians,
each library's version, the command, the date, the commit, the cores and the load average
before and after; ``docs/speed.md`` quotes it. An import that fails stops the benchmark
(a missing library is not a free one).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "import_costs.json"
# name in the results file: (statement timed, distribution whose version is recorded)
LIBRARIES = {
    "scikit-learn": ("import sklearn.cluster, sklearn.metrics", "scikit-learn"),
    "scipy.stats": ("import scipy.stats", "scipy"),
    "pandas": ("import pandas", "pandas"),
    "numpy": ("import numpy", "numpy"),
    "kneed": ("import kneed", "kneed"),
    "matplotlib.pyplot": ("import matplotlib.pyplot", "matplotlib"),
}


def timed(statement: str) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of ``python -c STATEMENT`` in a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", statement], capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1:] or ["no message"]
        sys.exit(f"python -c {statement!r} exited {done.returncode}: {said[0]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def _version(distribution: str) -> str:
    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results file (JSON)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    load_before = os.getloadavg()
    start_up: list[tuple[float, float]] = []
    beyond: dict[str, list[tuple[float, float]]] = {name: [] for name in LIBRARIES}
    for _ in range(args.repeat):
        cpu0, wall0 = timed("pass")
        start_up.append((cpu0, wall0))
        for name, (statement, _) in LIBRARIES.items():
            cpu, wall = timed(statement)
            beyond[name].append((cpu - cpu0, wall - wall0))
    load_after = os.getloadavg()

    def figures(runs: list[tuple[float, float]]) -> dict:
        return {
            "median_cpu_s": round(statistics.median(c for c, _ in runs), 2),
            "median_wall_s": round(statistics.median(w for _, w in runs), 2),
            "runs_cpu_s": [round(c, 3) for c, _ in runs],
            "runs_wall_s": [round(w, 3) for _, w in runs],
        }

    result = {
        "command": f"python benchmarks/import_costs.py --repeat {args.repeat}",
        "date": date,
        "commit": commit,
        "python": sys.version.split()[0],
        "cores": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "start_up": figures(start_up),
        "beyond_start_up": {
            name: {"statement": LIBRARIES[name][0], "version": _version(LIBRARIES[name][1])}
            | figures(runs)
            for name, runs in beyond.items()
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(
        f"{result['command']} ({result['cores']} cores, load average "
        f"{load_before[0]:.1f} before, {load_after[0]:.1f} after); beyond `python -c pass` "
        f"({result['start_up']['median_cpu_s']:.2f} CPU-s), medians:"
    )
    for name, said in result["beyond_start_up"].items():
        print(f"  {name:18s} {said['median_cpu_s']:.2f} CPU-s, {said['median_wall_s']:.2f} s wall")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
