"""The MLPerf Training benchmarks gpuscale knows: names, run counts and quality targets.

The quality targets mirror the ``ATLEAST_ONE_CHECK`` rules of the official compliance
checker (``mlperf_logging/compliance_checker/training_X.Y.0/{closed,open}_<bench>.yaml``)
for rounds v4.0 to v5.0: a run counts only if at least one logged quality value passes.
The run counts mirror ``mlperf_logging.benchmark_meta``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from gpuscale.tables import RENAMED, benchmark_of_folder

QualityCheck = Callable[[Any], bool]


def _range(
    lo: float | None, hi: float | None, *, lo_strict: bool = False, hi_strict: bool = False
) -> QualityCheck:
    """A check ``lo <= v < hi`` (bounds optional, strictness per side)."""

    def check(value: Any) -> bool:
        if lo is not None and (value <= lo if lo_strict else value < lo):
            return False
        return not (hi is not None and (value >= hi if hi_strict else value > hi))

    return check


def _fid_clip(fid_max: float | None, clip_min: float | None) -> QualityCheck:
    """Stable Diffusion's aggregated check on ``{"FID": .., "CLIP": ..}``."""

    def check(value: Any) -> bool:
        fid, clip = value["FID"], value["CLIP"]
        if fid_max is None:  # open division: only sanity bounds
            return fid >= 0.0 and clip <= 1.0
        return 0.0 <= fid <= fid_max and clip_min <= clip <= 1.0

    return check


@dataclass(frozen=True, kw_only=True, slots=True)
class Benchmark:
    """The scoring rules of one MLPerf Training benchmark (``name`` as published)."""

    name: str
    result_files: int
    quality_key: str = "eval_accuracy"
    closed_check: QualityCheck
    open_check: QualityCheck
    # Runs the olympic rule drops at each end (the official summarizer: 4 for unet3d).
    max_dropped_runs: int = 1

    def passes_quality(self, value: Any, division: str) -> bool:
        """Whether one logged quality value meets this division's target."""
        check = self.closed_check if division == "closed" else self.open_check
        try:
            return bool(check(value))
        except (TypeError, KeyError, IndexError):
            # The official checker raises here; a malformed value never passes.
            return False


_OPEN_LT1 = _range(None, 1.0, hi_strict=True)

BENCHMARKS: dict[str, Benchmark] = {
    b.name: b
    for b in (
        Benchmark(
            name="bert",
            result_files=10,
            closed_check=_range(0.720, 1.0, hi_strict=True),
            open_check=_OPEN_LT1,
        ),
        Benchmark(
            name="llama2_70b_lora",
            result_files=10,
            closed_check=_range(0.0, 0.925, lo_strict=True),
            open_check=_OPEN_LT1,
        ),
        Benchmark(
            name="retinanet",
            result_files=5,
            closed_check=_range(0.340, 1.0, hi_strict=True),
            open_check=_OPEN_LT1,
        ),
        Benchmark(
            name="stable_diffusion",
            result_files=10,
            quality_key="aggregated_eval_accuracy",
            closed_check=_fid_clip(90.0, 0.15),
            open_check=_fid_clip(None, None),
        ),
        Benchmark(
            name="dlrm_dcnv2",
            result_files=10,
            closed_check=_range(0.80275, 1.0),
            open_check=_range(None, 1.0),
        ),
        Benchmark(
            name="rgat",
            result_files=10,
            closed_check=_range(0.72, 1.0, hi_strict=True),
            open_check=_OPEN_LT1,
        ),
        Benchmark(
            name="gpt3",
            result_files=3,
            closed_check=_range(2.6, 2.69, lo_strict=True),
            open_check=_range(2.6, 2.69, lo_strict=True),
        ),
        Benchmark(
            name="llama31_405b",
            result_files=3,
            closed_check=_range(0.0, 5.6, lo_strict=True),
            open_check=_OPEN_LT1,
        ),
        Benchmark(
            name="resnet",
            result_files=5,
            closed_check=_range(0.7590, 1.0, hi_strict=True),
            open_check=_OPEN_LT1,
        ),
        Benchmark(
            name="unet3d",
            result_files=40,
            closed_check=_range(0.908, None),
            open_check=_OPEN_LT1,
            max_dropped_runs=4,
        ),
    )
}

# Folders renamed between rounds: the old name is the same benchmark under its new name.
BENCHMARKS.update({old: replace(BENCHMARKS[new], name=old) for old, new in RENAMED.items()})

# The benchmarks each ruleset's compliance checker accepts as ``submission_benchmark``;
# a run logging another name fails compliance and is dropped.
ALLOWED_IN_LOG: dict[tuple[str, str], frozenset[str]] = {
    ("v4.0", "closed"): frozenset(
        {
            "resnet",
            "ssd",
            "stable_diffusion",
            "maskrcnn",
            "gpt3",
            "dlrm_dcnv2",
            "bert",
            "rnnt",
            "unet3d",
            "gnn",
            "llama2_70b_lora",
        }
    ),
    ("v4.0", "open"): frozenset(
        {
            "resnet",
            "ssd",
            "stable_diffusion",
            "maskrcnn",
            "gpt3",
            "dlrm_dcnv2",
            "bert",
            "rnnt",
            "unet3d",
            "gnn",
        }
    ),
    ("v5.0", "closed"): frozenset(
        {
            "retinanet",
            "stable_diffusion",
            "dlrm_dcnv2",
            "bert",
            "rgat",
            "llama2_70b_lora",
            "llama31_405b",
        }
    ),
}
ALLOWED_IN_LOG[("v4.1", "closed")] = ALLOWED_IN_LOG[("v4.0", "closed")]
ALLOWED_IN_LOG[("v4.1", "open")] = ALLOWED_IN_LOG[("v4.0", "open")]
ALLOWED_IN_LOG[("v5.0", "open")] = ALLOWED_IN_LOG[("v5.0", "closed")]


def get_benchmark(name: str) -> Benchmark | None:
    """The rules for a folder name (``ssd``, ``retinanet``, ...), or None if unknown."""
    return BENCHMARKS.get(benchmark_of_folder(name))
