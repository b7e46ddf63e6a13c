"""End-to-end time of the default report (``gpuscale report``) in a fresh process.

Usage::

    python benchmarks/report.py [--repeat 3]

Runs ``gpuscale report`` (bundled v4.1, the study's four workloads) in a new Python
process each time, so imports count, and prints each wall time, the best, and the ratio
to a baseline measured in the same run: a fresh process that only imports gpuscale's
CLI and loads the bundled round. Target on the 2-core machine: <= 5 s.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time

TARGET_S = 5.0


def timed(args: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    baseline = [
        sys.executable,
        "-c",
        "import gpuscale.cli; from gpuscale import load_round; load_round('v4.1')",
    ]
    base = min(timed(baseline) for _ in range(args.repeat))
    runs = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as out:
            runs.append(timed([sys.executable, "-m", "gpuscale.cli", "report", "--out", out]))
    best = min(runs)
    print("gpuscale report (v4.1, study workloads), fresh process:")
    print("  runs: " + ", ".join(f"{t:.2f} s" for t in runs))
    print(
        f"  best: {best:.2f} s; baseline (import + load round): {base:.2f} s; "
        f"ratio {best / base:.1f}x"
    )
    print(f"  target <= {TARGET_S:.0f} s: {'met' if best <= TARGET_S else 'NOT met'}")


if __name__ == "__main__":
    main()
