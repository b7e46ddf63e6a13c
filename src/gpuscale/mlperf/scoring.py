"""Official MLPerf Training scoring: olympic average of the runs' times to train.

Mirrors ``mlperf_logging.result_summarizer`` (``_compute_strong_score_standalone`` and
``_compute_olympic_average``):

* a run's time to train is ``(run_stop - run_start) / 60 / 1000`` minutes;
* a run whose log fails compliance (parse error, quality target missed, missing
  ``run_stop`` ...) is *dropped*, and counts as one of the runs the olympic rule drops
  at the slow end;
* with ``d`` runs dropped and ``k`` the olympic drop count (1; 4 for unet3d), the
  score is the mean of the sorted counted times ``t[k : n - (k - d)]``; more than ``k``
  dropped runs give no score;
* the mean is multiplied by the RCP ``scaling_factor`` of ``scaling.json`` (1 if absent).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class OlympicResult:
    """A benchmark score and which runs it used.

    ``kept`` holds the positions (into the input list of times) of the runs the olympic
    rule averaged, in ascending time order; ``reason`` says why there is no score.
    """

    time_to_train_min: float | None
    kept: tuple[int, ...]
    reason: str


def run_minutes(run_start_ms: float, run_stop_ms: float) -> float:
    """Time to train of one run in minutes, computed as the official tool does."""
    return (run_stop_ms - run_start_ms) / 60 / 1000


def olympic_score(
    times_min: list[float],
    dropped_runs: int,
    *,
    max_dropped_runs: int = 1,
    scaling_factor: float = 1.0,
) -> OlympicResult:
    """The official score of one (system, benchmark) from its counted runs' times.

    ``times_min`` are the counted runs (any order); ``dropped_runs`` the runs that did not
    count. Returns the score (already multiplied by ``scaling_factor``) or a reason.
    """
    if dropped_runs > max_dropped_runs:
        return OlympicResult(
            None,
            (),
            f"{dropped_runs} runs failed or did not converge; at most {max_dropped_runs} may",
        )
    order = sorted(range(len(times_min)), key=lambda i: times_min[i])
    kept = order[max_dropped_runs : len(order) - (max_dropped_runs - dropped_runs)]
    if not kept:
        return OlympicResult(
            None, (), f"too few counted runs ({len(times_min)}) for the olympic average"
        )
    countable = [times_min[i] for i in kept]
    score = sum(countable) * 1.0 / len(countable)
    return OlympicResult(score * scaling_factor, tuple(kept), "")
