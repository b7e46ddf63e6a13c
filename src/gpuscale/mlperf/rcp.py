"""Samples (or epochs) to converge of a run, as the official RCP checker counts them.

Mirrors ``mlperf_logging.rcp_checker.read_submission_file``: walking the log, the
progress of the last evaluation line is remembered (``samples_count`` for the LLM
benchmarks, ``epoch_num`` rounded to 3 places for the others, where BERT logs samples
as ``epoch_num``), and at a successful ``run_stop`` it becomes the run's value. Stable
Diffusion uses the first evaluation step whose FID <= 90 and CLIP >= 0.15. A run that did
not stop with ``success`` has no value (the checker uses 1e9 and drops it).

``rcp_points`` reads the reference convergence points the checker compares against
(``rcp_checker/training_X.Y.0/rcps_<benchmark>.json``): per global batch, the samples
(or epochs) the reference runs needed, a run that cannot be true left out
(``rcp_runs``, said by ``rcp_left_out``); ``workload_rcps`` a workload's in a ruleset, under
every name its RCP file has had (``rcp_names``), with the rulesets that hold them.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpuscale.mlperf.benchmarks import workload_in_round
from gpuscale.mlperf.runlog import RunLog
from gpuscale.plausibility import SAMPLES_TO_CONVERGE_FACTOR
from gpuscale.tables import workload_facts
from gpuscale.tables.workloads import (
    RENAMED,
    TARGETS,
    Unit,
    convergence_unit,
    display_name,
    first_epoch_num,
    samples_per_epoch,
)


def _fid_clip(values: dict[str, float]) -> bool:
    return values.get("FID", 1e9) <= 90.0 and values.get("CLIP", -1.0) >= 0.15


def run_samples_to_converge(
    log: RunLog,
    group: str = "samples_count",
    passes: Callable[[dict[str, float]], bool] = _fid_clip,
) -> float | None:
    """The run's samples (or epochs) to converge, or None when it did not converge.

    Stable Diffusion's evaluations are grouped by the metadata member ``group`` (the
    ruleset's: ``step_num`` in 3.1, else ``samples_count``) and ``passes`` says whether a
    group's FID and CLIP reach the target (default: the RCP checker's FID <= 90 and
    CLIP >= 0.15)."""
    bench = log.benchmark
    facts = workload_facts(bench or "")
    by_samples = facts is not None and facts.progress_key == "samples_count"
    sd_evals: dict[float, dict[str, float]] = {}
    conv: float | None = None
    result: float | None = None
    stops = iter(log.run_stops)
    next_stop = next(stops, None)

    def settle(upto: int | None) -> None:
        nonlocal next_stop, result
        while next_stop is not None and (upto is None or next_stop[0] < upto):
            if next_stop[1] == "success":
                if bench == "stable_diffusion":
                    passing = [step for step, m in sd_evals.items() if passes(m)]
                    result = min(passing, default=None)
                else:
                    result = conv
            else:
                result = None
            next_stop = next(stops, None)

    for ev in log.evals:
        settle(ev.index)
        if bench == "stable_diffusion":
            step = ev.step_num if group == "step_num" else ev.samples_count
            if step is not None and ev.metric is not None and isinstance(ev.value, int | float):
                sd_evals.setdefault(step, {})[ev.metric] = float(ev.value)
        elif by_samples:
            conv = ev.samples_count
        elif ev.epoch_num is not None:
            conv = round(ev.epoch_num, 3)
    settle(None)
    return result


def olympic_samples(values: list[float | None], max_failed: int = 1) -> float | None:
    """The benchmark's samples to converge: the mean of the converged runs without the
    lowest and, unless a failed run already took its place, the highest.

    Equals the official summarizer (which sorts failed runs in as 1e9 and averages
    ``sorted[1:-1]``) whenever at most one run failed. With more failures allowed (unet3d
    allows 4) the official tool averages the 1e9 placeholders in; gpuscale does not. No
    value with more than ``max_failed`` failures or fewer than 3 runs.
    """
    # A table cell holds NaN where the run had no value.
    cleaned = [None if v is None or v != v else float(v) for v in values]
    failed = sum(v is None for v in cleaned)
    converged = sorted(v for v in cleaned if v is not None)
    if failed > max_failed or len(cleaned) < 3:
        return None
    kept = converged[1 : len(converged) - max(0, 1 - failed)]
    if not kept:
        return None
    return float(sum(kept) / len(kept))


def _rcp_dir() -> Path | None:
    spec = importlib.util.find_spec("mlperf_logging")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "rcp_checker"


@dataclass(frozen=True, slots=True)
class LeftOutRun:
    """A reference run an RCP file lists that cannot be true, left out where the file is
    read (:func:`rcp_runs`): its global ``batch``, its samples (or epochs) to converge
    (``value``), the ``median`` of every run the file lists at that batch, and how many
    it lists there (``runs``, this one included)."""

    batch: float
    value: float
    median: float
    runs: int


@functools.lru_cache(maxsize=256)
def _rcp_file(
    ruleset: str, benchmark: str
) -> tuple[tuple[tuple[float, tuple[float, ...]], ...], tuple[LeftOutRun, ...]]:
    """The reference runs of a benchmark's RCP file in a ruleset, by increasing batch, and
    those left out of them (:func:`rcp_runs`); both empty where the package has none."""
    folder = _rcp_dir()
    if folder is None:
        return (), ()
    path = folder / f"training_{ruleset}" / f"rcps_{benchmark}.json"
    try:  # a ruleset without RCPs for the benchmark has no file
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return (), ()
    if not isinstance(entries, dict):
        return (), ()
    points: dict[float, list[float]] = {}
    for entry in entries.values():
        if not isinstance(entry, dict):
            continue
        runs = entry.get("Epochs to converge") or entry.get("samples to converge") or []
        values = [float(v) for v in runs if isinstance(v, int | float) and v > 0]
        if values and isinstance(entry.get("BS"), int | float):
            points.setdefault(float(entry["BS"]), []).extend(values)
    kept, left_out = [], []
    for batch, values in sorted(points.items()):
        middle = statistics.median(values)
        low, high = middle / SAMPLES_TO_CONVERGE_FACTOR, middle * SAMPLES_TO_CONVERGE_FACTOR
        kept.append((batch, tuple(v for v in values if low <= v <= high)))
        left_out += [
            LeftOutRun(batch, v, middle, len(values)) for v in values if not low <= v <= high
        ]
    return tuple(kept), tuple(left_out)


def rcp_runs(ruleset: str, benchmark: str) -> tuple[tuple[float, tuple[float, ...]], ...]:
    """(global batch, every reference run's samples or epochs to converge) of each
    reference convergence point of a benchmark in a ruleset (``4.1.0``), by increasing
    batch; empty when the package has none. The one reader of the RCP files' runs: a run
    more than ``SAMPLES_TO_CONVERGE_FACTOR`` (10x) from the median of its batch's runs
    cannot be true and is left out here, for every reader alike (the convergence model,
    the RCP means, the intervals' pools), and said (:func:`rcp_left_out`; the round's
    problems: ``convergence_check.rcp_problems``). Ruleset 4.1.0 lists GPT-3 at batch
    3,072 converging in 13,790,871,552 tokens (2,192 steps) beside six runs of
    1,207,959,552-1,258,291,200 (192-200 steps): a typo, which kept would put the point's
    mean at 3.0e9 tokens, 2.5x that of rulesets 3.0.0-4.0.0 (the same runs, 1.22e9).
    The runs of every other batch and ruleset lie within 3x of their median."""
    return _rcp_file(ruleset, benchmark)[0]


def rcp_left_out(ruleset: str, benchmark: str) -> tuple[LeftOutRun, ...]:
    """The reference runs of a benchmark's RCP file in a ruleset that :func:`rcp_runs`
    leaves out (none in most files)."""
    return _rcp_file(ruleset, benchmark)[1]


def rcp_points(ruleset: str, benchmark: str) -> tuple[tuple[float, float], ...]:
    """(global batch, mean samples or epochs to converge) of each reference convergence
    point: the plain mean of its runs as :func:`rcp_runs` reads them (a run that cannot be
    true left out), not the RCP checker's olympic mean (``rcp_checker.compute_rcp_stats``:
    the lowest and highest run dropped, four each for 3D U-Net). The checker's mean is the
    threshold of its pass/fail test of a submission, a trim that stays robust against a
    slow reference run; these points are what a run is expected to need (the convergence
    model ``E(B)`` fitted to them sets the plan's and the analysis' expected samples),
    whose estimate is the mean of every plausible run, slow ones included. The two agree
    within the runs' spread: 1,216,348,160 against 1,218,025,882 tokens at GPT-3's 3,072
    in ruleset 4.1.0."""
    return tuple((bs, float(sum(v) / len(v))) for bs, v in rcp_runs(ruleset, benchmark))


def rcp_files() -> dict[str, tuple[str, ...]]:
    """{ruleset (``4.1.0``): the names of its RCP files (``rcps_<name>.json``)}, oldest
    ruleset first; empty without mlperf-logging."""
    folder = _rcp_dir()
    if folder is None or not folder.is_dir():
        return {}
    found = {
        p.name.removeprefix("training_"): tuple(
            sorted(f.stem.removeprefix("rcps_") for f in p.glob("rcps_*.json"))
        )
        for p in folder.glob("training_*")
    }
    return {r: found[r] for r in sorted(found, key=_version)}


def _version(ruleset: str) -> tuple[int, ...]:
    """A ruleset's version, to sort by (``4.1.0`` -> ``(4, 1, 0)``)."""
    return tuple(int(x) for x in ruleset.split(".") if x.isdigit())


def _round_of(ruleset: str) -> str:
    """The round a ruleset checks (``4.1.0`` -> ``v4.1``)."""
    return "v" + ruleset.rsplit(".", 1)[0]


def rcp_names(workload: str, ruleset: str) -> list[str]:
    """The RCP file names (``rcps_<name>.json``) that hold a workload's points in a
    ruleset: its name then and the names it had, where that ruleset's benchmark of that
    name is this workload (``ssd`` is SSD-ResNet34 up to ruleset 1.1.0 and RetinaNet from
    2.0.0: RetinaNet has no RCPs in 1.1.0). ``workload``: a cross-round name, or a
    benchmark folder's (read as the ruleset's round reads it)."""
    round_name = _round_of(ruleset)
    name = workload_in_round(workload, round_name)
    names = {name, *(old for old, new in RENAMED.items() if new == name)}
    names |= {folder for folder, held in TARGETS.items() if any(w == name for w, _ in held)}
    return sorted(n for n in names if workload_in_round(n, round_name) == name)


@dataclass(frozen=True, slots=True)
class WorkloadRcps:
    """A workload's reference convergence points in a ruleset, read once: its ``display``
    name, the ``unit`` they count in that ruleset's round (None for a workload gpuscale
    does not know), the points under each name its RCP file had there (``points``, in
    :func:`rcp_names`' order; empty where that ruleset has no file of the name) and, only
    where it has none, the rulesets where a file of its names holds them (``elsewhere``,
    oldest first); where they count epochs, the samples an epoch holds
    (``tables.workloads.samples_per_epoch``; None: unknown) and the ``epoch_num`` its
    logs and RCPs count from (``first_epoch_num``: 1 for the original DLRM, else 0)."""

    workload: str
    ruleset: str
    display: str
    unit: Unit | None
    points: tuple[tuple[str, tuple[tuple[float, float], ...]], ...]
    elsewhere: tuple[str, ...] = ()
    samples_per_epoch: int | None = None
    first_epoch_num: int = 0


def _points_held(
    workload: str, ruleset: str, files: dict[str, tuple[str, ...]], newest: bool
) -> tuple[str, dict[str, tuple[tuple[float, float], ...]], list[str], tuple[str, ...]]:
    """The ruleset read (the one asked; with ``newest``, where it has none of the
    workload's points, the newest that has), its points by name, the names the workload's
    file had there, and where it has none of them, the rulesets whose files hold one of
    its names (else ())."""
    for _ in range(2):  # the ruleset asked, then the newest that has them
        points = {name: rcp_points(ruleset, name) for name in files.get(ruleset, ())}
        names: dict[str, list[str]] = {}
        for other in (ruleset, *files):  # every ruleset's only where the one asked has none
            names[other] = rcp_names(workload, other)
            if any(points.get(name) for name in names[ruleset]):
                return ruleset, points, names[ruleset], ()
        holding = tuple(r for r, held in files.items() if set(names[r]) & set(held))
        if not (newest and holding):
            break
        ruleset, newest = holding[-1], False
    return ruleset, points, names[ruleset], holding


def workload_rcps(workload: str, ruleset: str, *, newest: bool = False) -> WorkloadRcps:
    """A workload's (cross-round name, or a benchmark folder's) RCPs in a ruleset, each
    source read once, in a row: the RCP files (one glob) and the ruleset's points under
    each name, the names the workload's file had there (:func:`rcp_names`: the round's
    benchmarks; where it has none of its points, in every ruleset), then its facts.
    ``newest``: where the ruleset has none of its points, the newest ruleset's that has
    (ResNet-50's 4.0.0 for 5.0.0), a default ruleset standing in for none named."""
    ruleset, points, names, holding = _points_held(workload, ruleset, rcp_files(), newest)
    round_name = _round_of(ruleset)
    return WorkloadRcps(
        workload,
        ruleset,
        display_name(workload),
        convergence_unit(workload, round_name),
        tuple((name, points.get(name, ())) for name in names),
        holding,
        samples_per_epoch(workload),
        first_epoch_num(workload),
    )
