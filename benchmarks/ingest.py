"""Ingest speed: gpuscale reading a whole round vs grep and xz over the same bytes.

Usage::

    python benchmarks/ingest.py [--archive ../shared/mlperf/training_results_v4.1.tar.xz]
                                [--repeat 3] [--official] [--out FILE]

Unpacks the archive once into a temporary directory, then, --repeat rounds of:
``grep -c ':::MLLOG'`` over the round's files (baseline for the directory read),
``gpuscale.mlperf.read_round`` on the directory (one read path, one process: the process
team and the xz block reader were removed when they measured no faster on the loaded
2-core machine, issue 25), ``xz -dc`` of the archive (baseline for the archive read),
``read_round`` on the archive, ``read_round`` on the directory with the regex scan (what
an install without a C compiler reads with), the MLLOG line scan of every file by the C
scanner and by the regex path it replaces, and the user-facing command
``gpuscale scores DIR --format csv`` against ``python -c pass`` (interpreter start-up),
each parsing the round (no cache: ``$XDG_CACHE_HOME`` set where none can be written), and
``gpuscale scores ARCHIVE --format csv`` a second time, from the cache of rounds read
(``gpuscale.mlperf.load``) its first run filled.
Each round runs all of them back to back, so a ratio pairs runs made under the same
load; the median of those paired ratios is the verdict, best and every run are printed
too. With ``--official``,
the official ``mlperf_logging`` summarizer on the same directory (about a minute).
Targets (2-core machine): directory <= 0.5 s, archive <= 1.3x ``xz -dc``, the scores
command <= 1.5 s beyond interpreter start-up, the cached one <= 1.0 s beyond it.

Writes every run, median, ratio and verdict to ``benchmarks/results/ingest_speed.json``
(or ``--out``) with the command, the date, the commit, the scanner in use, the cores and
the load average before and after: ``docs/speed.md`` quotes that file
(:func:`markdown`, :func:`markdown_no_c`; ``tests/test_ingest_speed_doc.py``). A timed
command that fails stops the benchmark (a crash is not a fast run).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from gpuscale.mlperf import mllog
from gpuscale.mlperf.ingest import read_round

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ARCHIVE = ROOT.parent / "shared/mlperf/training_results_v4.1.tar.xz"
RESULTS = ROOT / "benchmarks" / "results" / "ingest_speed.json"
BEGIN, END = "<!-- ingest_speed.json: begin -->\n", "<!-- ingest_speed.json: end -->"
NO_C_BEGIN, NO_C_END = (
    "<!-- ingest_speed.json, no C: begin -->\n",
    "<!-- ingest_speed.json, no C: end -->",
)
# name in the results file: (numerator, denominator) of the paired per-round ratio
RATIOS = {
    "dir read / grep": ("gpuscale read_round (dir)", "grep -c MLLOG (dir)"),
    "archive read / xz -dc": ("gpuscale read_round (archive)", "xz -dc (archive)"),
    "regex scan / C scan": ("regex scan (Python)", "C scan (_scan.c)"),
    "dir read, no C / with C": ("read_round (dir), regex scan", "gpuscale read_round (dir)"),
    "dir read CPU, no C / with C": (
        "read_round (dir), regex scan CPU",
        "gpuscale read_round (dir) CPU",
    ),
}
# command: seconds beyond interpreter start-up (``python -c pass``) it may take
BEYOND_START_UP = {"gpuscale scores DIR -f csv": 1.5, "gpuscale scores ARCHIVE, cached": 1.0}
TARGET_DIR_S, TARGET_ARCHIVE_X = 0.5, 1.3


def seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def scan_seconds(files: list[str]) -> dict[str, float]:
    """Seconds spent finding the MLLOG lines of every file, by each scanner (files read
    once, outside the timing)."""
    scanners = {"regex scan (Python)": mllog.payloads_python}
    if mllog.SCANNER == "C":
        scanners["C scan (_scan.c)"] = mllog.find_payloads
    spent = dict.fromkeys(scanners, 0.0)
    for name in files:
        data = Path(name).read_bytes()
        for label, scan in scanners.items():
            start = time.perf_counter()
            scan(data)
            spent[label] += time.perf_counter() - start
    return spent


def without_c_scan(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` run with the regex scan in place of the C one (an install without a C
    compiler), restored after."""

    def run() -> object:
        kept, mllog._payloads_c = mllog._payloads_c, None
        try:
            return fn()
        finally:
            mllog._payloads_c = kept

    return run


def run_official(root: Path, ruleset: str) -> None:
    """The official summarizer over every organisation folder (both cores)."""
    code = (
        "import sys, os, io, contextlib, multiprocessing as mp\n"
        "from mlperf_logging.result_summarizer import result_summarizer as rs\n"
        "def one(org):\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        try: rs.summarize_results(org, 'training', sys.argv[2])\n"
        "        except Exception: pass\n"
        "root = sys.argv[1]\n"
        "orgs = [os.path.join(root, o) for o in sorted(os.listdir(root))\n"
        "        if rs._is_organization_folder(os.path.join(root, o))]\n"
        "with mp.Pool(2) as p: p.map(one, orgs, chunksize=1)\n"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(root), ruleset],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


# where no cache folder can be made: each command parses the round, as a first read does
NO_CACHE = {**os.environ, "XDG_CACHE_HOME": os.devnull}


def _command(
    *argv: str, env: dict[str, str] = NO_CACHE, ok: tuple[int, ...] = (0,)
) -> Callable[[], object]:
    """``argv`` run once; an exit status outside ``ok`` stops the benchmark (``grep -c``
    exits 1 where a file has no match)."""

    def run() -> None:
        done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        if done.returncode not in ok:
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
            sys.exit(f"{' '.join(argv[:4])} failed (exit {done.returncode}): {' '.join(tail)}")

    return run


def _git(*argv: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), *argv], capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else ""


def figures_of(runs: dict[str, list[float]], context: dict) -> dict:
    """The results file: ``context`` (command, machine, round), every run with its median
    and best, the paired ratios, the seconds beyond start-up and each target's verdict."""
    out = dict(context)
    out["runs"] = {
        name: {
            "runs": [round(t, 3) for t in times],
            "median_s": round(statistics.median(times), 3),
            "best_s": round(min(times), 3),
        }
        for name, times in runs.items()
    }
    ratios = {}
    for label, (top, bottom) in RATIOS.items():
        if top in runs and bottom in runs:
            paired = [a / b for a, b in zip(runs[top], runs[bottom], strict=True)]
            ratios[label] = {
                "median": round(statistics.median(paired), 2),
                "best_best": round(min(runs[top]) / min(runs[bottom]), 2),
                "per_round": [round(r, 2) for r in paired],
            }
    out["ratios"] = ratios
    beyond = {}
    for command, target in BEYOND_START_UP.items():
        spent = [a - b for a, b in zip(runs[command], runs["python -c pass"], strict=True)]
        median = statistics.median(spent)
        beyond[command] = {
            "median_s": round(median, 3),
            "runs": [round(b, 3) for b in spent],
            "target_s": target,
            "met": median <= target,
        }
    out["beyond_start_up"] = beyond
    directory = statistics.median(runs["gpuscale read_round (dir)"])
    out["targets"] = {
        "directory_s": {"target": TARGET_DIR_S, "met": directory <= TARGET_DIR_S},
        "archive_x_xz": {
            "target": TARGET_ARCHIVE_X,
            "met": "archive read / xz -dc" in ratios
            and ratios["archive read / xz -dc"]["median"] <= TARGET_ARCHIVE_X,
        },
    }
    if "official summarizer (dir)" in runs:
        official = runs["official summarizer (dir)"][0]
        out["official_summarizer_x_dir_read"] = round(
            official / min(runs["gpuscale read_round (dir)"]), 0
        )
    return out


def _verdict(met: bool) -> str:
    return "met" if met else "**not met**"


def _load(figures: dict) -> str:
    before, after = figures["load_average_before"][0], figures["load_average_after"][0]
    return f"{figures['cores']} cores, load average {before:.1f} before and {after:.1f} after"


def markdown(figures: dict) -> str:
    """The paragraph ``docs/speed.md`` quotes: the reads, the commands, the targets."""
    runs, ratios, beyond = figures["runs"], figures["ratios"], figures["beyond_start_up"]
    directory = runs["gpuscale read_round (dir)"]
    archive = ratios["archive read / xz -dc"]
    scores, cached = beyond["gpuscale scores DIR -f csv"], beyond["gpuscale scores ARCHIVE, cached"]
    text = (
        f"`{figures['command']}` ({figures['date']}, commit {figures['commit']}, "
        f"{figures['scanner']} line scanner, {_load(figures)}): the directory in "
        f"{directory['median_s']:.3f} s median (best {directory['best_s']:.3f} s; "
        f"{runs['gpuscale read_round (dir) CPU']['median_s']:.2f} CPU-s median), the archive "
        f"in {archive['median']:.2f}x the time of `xz -dc` (best/best "
        f"{archive['best_best']:.2f}x), `gpuscale scores DIR -f csv` in "
        f"{scores['median_s']:.3f} s beyond interpreter start-up (`python -c pass` "
        f"{runs['python -c pass']['median_s']:.3f} s), and `gpuscale scores ARCHIVE -f csv` "
        f"read a second time, from the cache of rounds read below, in "
        f"{cached['median_s']:.3f} s beyond it. Targets: directory <= "
        f"{figures['targets']['directory_s']['target']:g} s "
        f"{_verdict(figures['targets']['directory_s']['met'])}, archive <= "
        f"{figures['targets']['archive_x_xz']['target']:g}x `xz -dc` "
        f"{_verdict(figures['targets']['archive_x_xz']['met'])}, `scores` <= "
        f"{scores['target_s']:g} s {_verdict(scores['met'])}, cached <= "
        f"{cached['target_s']:g} s {_verdict(cached['met'])}."
    )
    if "official summarizer (dir)" in runs:
        text += (
            f" MLCommons' summarizer took {runs['official summarizer (dir)']['median_s']:.0f} s"
            " over the same directory (both cores)."
        )
    return text + "\n"


def markdown_no_c(figures: dict) -> str:
    """The sentence ``docs/speed.md`` quotes on an install without the C scanner."""
    scan = figures["ratios"]["regex scan / C scan"]
    cpu = figures["ratios"]["dir read CPU, no C / with C"]
    wall = figures["ratios"]["dir read, no C / with C"]
    return (
        f"In the run above ({len(scan['per_round'])} rounds), the line scan alone took "
        f"**{scan['median']:.1f}x** as long without C (median of the paired rounds; "
        f"{min(scan['per_round']):.2f}-{max(scan['per_round']):.2f}x per round), the whole "
        f"directory read **{cpu['median']:.1f}x** (CPU time {cpu['median']:.2f}x median, "
        f"{min(cpu['per_round']):.2f}-{max(cpu['per_round']):.2f}x per round; wall times "
        f"scatter more, {wall['median']:.2f}x at the median).\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--archive", type=Path, default=DEFAULT_ARCHIVE)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--official", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results file (JSON)")
    args = parser.parse_args()
    if not args.archive.exists():
        sys.exit(f"no archive at {args.archive}")
    if args.repeat < 1:
        sys.exit("--repeat must be at least 1")
    # the code timed is the code at the start: the commit and date are taken now
    started = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": _git("rev-parse", "--short", "HEAD"),
        "source_changed_since_commit": bool(
            _git("status", "--porcelain", "src", "benchmarks/ingest.py")
        ),
    }
    load_before = os.getloadavg()
    grep, xz = shutil.which("grep"), shutil.which("xz")
    runs: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(args.archive) as tar:
            tar.extractall(tmp, filter="data")
        root = next(Path(tmp).iterdir())
        files = [str(p) for p in root.rglob("*") if p.is_file()]
        size_mb = sum(Path(f).stat().st_size for f in files) / 1e6
        print(f"round: {root.name}, {len(files)} files, {size_mb:.0f} MB unpacked")
        print(f"MLLOG scanner in use: {mllog.SCANNER}")
        tables = read_round(root)  # warm the page cache and the imports
        # Each round times every contender back to back, so a ratio compares runs made
        # under the same load (the machine drifts by 15-25% within minutes).
        contenders: dict[str, Callable[[], object]] = {}
        if grep:
            contenders["grep -c MLLOG (dir)"] = _command(
                grep, "-rc", ":::MLLOG", str(root), ok=(0, 1)
            )
        contenders["gpuscale read_round (dir)"] = lambda: read_round(root)
        if mllog.SCANNER == "C":
            contenders["read_round (dir), regex scan"] = without_c_scan(lambda: read_round(root))
        if xz:
            contenders["xz -dc (archive)"] = _command(xz, "-dc", str(args.archive))
        contenders["gpuscale read_round (archive)"] = lambda: read_round(args.archive)
        contenders["python -c pass"] = _command(sys.executable, "-c", "pass")
        contenders["gpuscale scores DIR -f csv"] = _command(
            sys.executable, "-m", "gpuscale.cli", "scores", str(root), "-f", "csv"
        )
        cached = {**os.environ, "XDG_CACHE_HOME": str(Path(tmp) / "cache")}
        again = (sys.executable, "-m", "gpuscale.cli", "scores", str(args.archive), "-f", "csv")
        _command(*again, env=cached)()  # the first read, which fills the cache
        if not any((Path(tmp) / "cache").rglob("*.pickle")):
            sys.exit("the first `gpuscale scores ARCHIVE` left no cached round")
        contenders["gpuscale scores ARCHIVE, cached"] = _command(*again, env=cached)
        # The two directory reads in this process are timed in CPU seconds too: on a
        # loaded machine their wall times scatter more than the scan they differ by.
        in_process = ("gpuscale read_round (dir)", "read_round (dir), regex scan")
        for _ in range(args.repeat):
            for name, fn in contenders.items():
                cpu = time.process_time()
                runs.setdefault(name, []).append(seconds(fn))
                if name in in_process:
                    runs.setdefault(f"{name} CPU", []).append(time.process_time() - cpu)
            for name, spent in scan_seconds(files).items():
                runs.setdefault(name, []).append(spent)
        if args.official:
            ruleset = root.name.rsplit("v", 1)[1] + ".0"
            runs["official summarizer (dir)"] = [seconds(lambda: run_official(root, ruleset))]
    load_after = os.getloadavg()
    print(f"runs: {len(tables.runs)}, scores: {tables.scores['time_to_train_min'].notna().sum()}")
    cores = os.cpu_count()
    print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} ({cores} cores)")
    for name, times in runs.items():
        shown = ", ".join(f"{t:.3f}" for t in times)
        print(f"{name:31s} best {min(times):6.3f} s  median {statistics.median(times):6.3f} s")
        print(f"{'':31s} runs: {shown}")

    def ratio(numerator: str, denominator: str, label: str, note: str = "") -> None:
        if numerator in runs and denominator in runs:
            paired = [a / b for a, b in zip(runs[numerator], runs[denominator], strict=True)]
            best = min(runs[numerator]) / min(runs[denominator])
            shown = ", ".join(f"{r:.2f}" for r in paired)
            print(
                f"ratio {label:25s} median {statistics.median(paired):.2f}x "
                f"(best/best {best:.2f}x; per round {shown}){note}"
            )

    ratio("gpuscale read_round (dir)", "grep -c MLLOG (dir)", "dir read / grep")
    ratio(
        "gpuscale read_round (archive)",
        "xz -dc (archive)",
        "archive read / xz -dc",
        " target <= 1.3x",
    )
    ratio("regex scan (Python)", "C scan (_scan.c)", "regex scan / C scan")
    ratio(
        "read_round (dir), regex scan",
        "gpuscale read_round (dir)",
        "dir read, no C / with C",
        " (what an install without a C compiler costs)",
    )
    ratio(
        "read_round (dir), regex scan CPU",
        "gpuscale read_round (dir) CPU",
        "dir read CPU, no C / with C",
    )
    for command, target in (
        ("gpuscale scores DIR -f csv", 1.5),
        ("gpuscale scores ARCHIVE, cached", 1.0),
    ):
        beyond = [a - b for a, b in zip(runs[command], runs["python -c pass"], strict=True)]
        verdict = "met" if statistics.median(beyond) <= target else "NOT met"
        print(
            f"{command} beyond start-up: median {statistics.median(beyond):.3f} s "
            f"(runs {', '.join(f'{b:.3f}' for b in beyond)}); target <= {target} s: {verdict}"
        )
    if "official summarizer (dir)" in runs:
        official = runs["official summarizer (dir)"][0]
        print(
            f"official summarizer: {official / min(runs['gpuscale read_round (dir)']):.0f}x slower"
        )
    ours_dir = statistics.median(runs["gpuscale read_round (dir)"])
    verdict = "met" if ours_dir <= TARGET_DIR_S else "NOT met"
    print(f"directory target <= {TARGET_DIR_S} s: {verdict} (median {ours_dir:.3f} s)")
    command = f"python benchmarks/ingest.py --repeat {args.repeat}"
    command += " --official" if args.official else ""
    context = {
        "command": command
        if args.archive == DEFAULT_ARCHIVE
        else f"{command} --archive {args.archive.name}",
        **started,
        "scanner": mllog.SCANNER,
        "cores": os.cpu_count(),
        "load_average_before": [round(x, 2) for x in load_before],
        "load_average_after": [round(x, 2) for x in load_after],
        "round": root.name,
        "files": len(files),
        "unpacked_mb": round(size_mb),
        "result_runs": len(tables.runs),
    }
    figures = figures_of(runs, context)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
