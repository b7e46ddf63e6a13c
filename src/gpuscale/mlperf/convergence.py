"""Samples (or epochs) to converge of a run, as the official RCP checker counts them.

Mirrors ``mlperf_logging.rcp_checker.read_submission_file``: walking the log, the
progress of the last evaluation line is remembered (``samples_count`` for the LLM
benchmarks, ``epoch_num`` rounded to 3 places for the others, where BERT logs samples
as ``epoch_num``), and at a successful ``run_stop`` it becomes the run's value. Stable
Diffusion uses the first evaluation step whose FID <= 90 and CLIP >= 0.15. A run that did
not stop with ``success`` has no value (the checker uses 1e9 and drops it).
"""

from __future__ import annotations

from gpuscale.mlperf.runlog import RunLog

NOT_CONVERGED = 1e9
_SAMPLE_COUNTED = frozenset({"llama2_70b_lora", "flux1", "llama31_405b", "llama31_8b"})


def run_samples_to_converge(log: RunLog) -> float | None:
    """The run's samples (or epochs) to converge, or None when it did not converge."""
    bench = log.benchmark
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
                    passing = [
                        step
                        for step, m in sd_evals.items()
                        if m.get("FID", 1e9) <= 90.0 and m.get("CLIP", -1.0) >= 0.15
                    ]
                    result = min(passing) if passing else None
                else:
                    result = conv
            else:
                result = None
            next_stop = next(stops, None)

    for ev in log.evals:
        settle(ev.index)
        if bench == "stable_diffusion":
            if (
                ev.samples_count is not None
                and ev.metric is not None
                and isinstance(ev.value, int | float)
            ):
                sd_evals.setdefault(ev.samples_count, {})[ev.metric] = float(ev.value)
        elif bench in _SAMPLE_COUNTED:
            conv = ev.samples_count
        elif ev.epoch_num is not None:
            conv = round(ev.epoch_num, 3)
    settle(None)
    return result


def olympic_samples(values: list[float | None]) -> float | None:
    """The benchmark's samples to converge: mean without the lowest and highest run.

    Non-converged runs count as 1e9 (so they are the ones dropped); with more than one
    of them, or fewer than 3 runs, there is no value (as in the official summarizer).
    """
    # A table cell holds NaN where the run had no value.
    values = [None if v is None or v != v else v for v in values]
    filled = sorted(NOT_CONVERGED if v is None else v for v in values)
    if sum(v is None for v in values) > 1 or len(filled) < 3:
        return None
    middle = filled[1:-1]
    return float(sum(middle) / len(middle))
