"""CPU and wall seconds of one ``gpuscale advise`` command, this checkout's against a
baseline's.

Usage::

    python benchmarks/advise_speed.py [--repeat 5] [--baseline acea9a46]

Each command runs in a fresh process (imports count), the baseline's and this checkout's
in turn within each repeat, so a busy period hits both. CPU is user + system time of the
process (``RUSAGE_CHILDREN``). The commands: advice by numbers with a workload (its
convergence from the MLPerf RCPs, its floor from the bundled results), by numbers
without one, and on a bench file of the repository. Writes
``benchmarks/results/advise_speed.json`` (every run, each case's median) and prints it;
``docs/speed.md`` quotes it. Target: under 5 s of CPU each on a 2-core machine. A run
that exits non-zero stops the benchmark (a crash is not a fast run).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "advise_speed.json"
TARGET_CPU_S = 5.0
# Each case's arguments of ``gpuscale advise``, as typed.
COMMANDS = {
    "by numbers, with a workload": (
        "--preset llama3-8b --step-ms 500 --batch 8 --workload llama2_70b_lora --device-name H100"
    ),
    "by numbers": "--step-ms 120 --batch 32 --params 350M --device-name A100",
    "a bench file": "--bench tests/advice/cpu_mlp_two_sweeps_gloo.jsonl",
}


def checkout(ref: str, into: Path) -> Path:
    """REF's ``src`` extracted into ``into`` (``git archive``), byte-compiled as an
    installed package is."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "src/gpuscale"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    source = into / "src"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(source)], check=True)
    return source


def timed(args: str, source: Path) -> dict[str, float]:
    """CPU and wall seconds of ``gpuscale advise ARGS`` with ``source`` first on the path.
    Every case is one that gives advice: a run that exits non-zero (a refusal, a crash)
    stops the benchmark, since its time is not the time of the advice."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "gpuscale", "advise", *shlex.split(args), "-f", "json"],
        env=os.environ | {"PYTHONPATH": str(source)},
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1:] or ["no message"]
        sys.exit(f"gpuscale advise {args} ({source}) exited {done.returncode}: {said[0]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"cpu_s": round(cpu, 3), "wall_s": round(wall, 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--baseline", default="acea9a46", help="git revision to compare with")
    args = parser.parse_args()
    now = ROOT / "src"
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(now)], check=True)
    cases = {}
    with tempfile.TemporaryDirectory() as folder:
        baseline = checkout(args.baseline, Path(folder))
        for name, command in COMMANDS.items():
            runs: dict[str, list[dict[str, float]]] = {"baseline": [], "now": []}
            for _ in range(args.repeat):
                runs["baseline"].append(timed(command, baseline))
                runs["now"].append(timed(command, now))
            medians = {
                case: {k: statistics.median(r[k] for r in done) for k in ("cpu_s", "wall_s")}
                for case, done in runs.items()
            }
            cases[name] = {
                "command": f"gpuscale advise {command}",
                "runs": runs,
                "median": medians,
                "cpu_ratio": round(medians["baseline"]["cpu_s"] / medians["now"]["cpu_s"], 2),
                "met": max(r["cpu_s"] for r in runs["now"]) < TARGET_CPU_S,
            }
            print(
                f"{name}: {medians['now']['cpu_s']:.2f} s CPU, {medians['now']['wall_s']:.2f} s "
                f"wall (baseline {medians['baseline']['cpu_s']:.2f} s, "
                f"{medians['baseline']['wall_s']:.2f} s)"
            )
    results = {
        "baseline": args.baseline,
        "repeat": args.repeat,
        "cores": os.cpu_count(),
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "target_cpu_s": TARGET_CPU_S,
        "cases": cases,
    }
    RESULTS.write_text(json.dumps(results, indent=1) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
