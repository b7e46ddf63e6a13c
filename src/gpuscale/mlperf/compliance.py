"""The structural rules of the official compliance checker that decide whether a run counts.

The official summarizer drops a run whose log fails ``mlperf_logging``'s compliance
checker. gpuscale emulates the checks of ``training_X.Y.0/common.yaml`` (ordering of
``init_start`` / ``init_stop`` / ``run_start`` / ``run_stop``, required keys, the
compile-time limit) and the per-benchmark quality target (see ``benchmarks.py``). The
hyper-parameter rules of the per-benchmark files are not emulated; on the published
rounds v4.0-v5.0 they change no score (the parity tests say so).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpuscale.mlperf.benchmarks import ALLOWED_IN_LOG, get_benchmark

if TYPE_CHECKING:
    from gpuscale.mlperf.runlog import EvalPoint

# key -> occurrence rule, as in common.yaml ("one": EXACTLY_ONE, "some": AT_LEAST_ONE).
_REQUIRED: dict[str, str] = {
    "submission_org": "one", "submission_platform": "one", "submission_division": "one",
    "cache_clear": "some", "init_start": "some", "init_stop": "one", "run_start": "one",
    "run_stop": "one", "eval_accuracy": "some", "train_samples": "one", "eval_samples": "one",
}
_ALTERNATIVES = (("block_start", "epoch_start"), ("block_stop", "epoch_stop"),
                 ("eval_start", "block_start"), ("eval_stop", "block_stop"))
_NOT_EMPTY = frozenset({"submission_org", "submission_platform", "train_samples",
                        "eval_samples"})


def check_common_rules(records: list[dict[str, Any] | None]) -> list[str]:
    """Violations of the common.yaml rules, in the order found (empty when compliant)."""
    values: dict[str, list[Any]] = {}
    violations: list[str] = []
    init_started = init_stopped = run_started = False
    first_init_start = 9e99
    compile_minutes = 0
    for rec in records:
        if rec is None:
            continue
        key = rec["key"]
        if key not in _REQUIRED and key not in ("block_start", "block_stop", "epoch_start",
                                                 "epoch_stop", "eval_start", "eval_stop"):
            continue
        value = rec["value"]
        values.setdefault(key, []).append(value)
        ts = float(rec["time_ms"])
        meta = rec["metadata"] if isinstance(rec["metadata"], dict) else {}
        if key == "submission_division":
            if len(values[key]) == 1:
                if value in ("closed", "open"):
                    compile_minutes = 240 if value == "open" else 30
                else:
                    violations.append(f"submission_division {value!r} is not closed/open")
        elif key in _NOT_EMPTY and value == "":
            violations.append(f"{key} is empty")
        elif key == "init_start":
            if init_stopped or run_started:
                violations.append("init_start after init_stop or run_start")
            init_started = True
            first_init_start = min(first_init_start, ts)
        elif key == "init_stop":
            if not init_started or run_started:
                violations.append("init_stop before init_start or after run_start")
            elif not ts - first_init_start < compile_minutes * 60 * 1e3:
                violations.append(f"initialisation took longer than {compile_minutes} min")
            init_stopped = True
        elif key == "run_start":
            if not init_stopped:
                violations.append("run_start before init_stop")
            run_started = True
        elif key == "run_stop":
            if not run_started:
                violations.append("run_stop before run_start")
            if "status" not in meta:
                violations.append("run_stop has no status")
    for key, rule in _REQUIRED.items():
        seen = values.get(key, [])
        if rule == "some" and not seen:
            violations.append(f"no {key} line")
        elif rule == "one" and len(seen) != 1:
            # The official checker only warns when repeated lines all carry one value.
            if not seen or any(v != seen[0] for v in seen):
                violations.append(f"{len(seen)} {key} lines, exactly one required")
    for pair in _ALTERNATIVES:
        if not any(values.get(k) for k in pair):
            violations.append(f"no {pair[0]} or {pair[1]} line")
    return violations


def run_violations(*, round_name: str, benchmark: str | None, division: str | None,
                   common: list[str], evals: list[EvalPoint]) -> list[str]:
    """All reasons the official checker would reject a run.

    ``benchmark`` and ``division`` are the values the log itself declares; ``evals`` its
    evaluation lines.
    """
    reasons = list(common)
    if division not in ("closed", "open"):
        return reasons
    allowed = ALLOWED_IN_LOG.get((round_name, division))
    if benchmark is None:
        reasons.append("no submission_benchmark line")
        return reasons
    if allowed is not None and benchmark not in allowed:
        reasons.append(f"benchmark {benchmark!r} is not allowed in the {division} division "
                       f"of {round_name}")
        return reasons
    bench = get_benchmark(benchmark)
    if bench is None:
        return reasons
    if bench.quality_key == "aggregated_eval_accuracy":
        quality: list[Any] = list(aggregate_fid_clip(evals).values())
        if len(quality) < 2:
            reasons.append(f"{len(quality)} aggregated evaluations, at least 2 required")
        if any("FID" not in q or "CLIP" not in q for q in quality):
            reasons.append("an evaluation lacks FID or CLIP")
    else:
        quality = [e.value for e in evals if e.key == bench.quality_key]
    if not any(bench.passes_quality(v, division) for v in quality):
        reasons.append(f"quality target not reached ({bench.quality_key})")
    return reasons


def aggregate_fid_clip(evals: list[EvalPoint]) -> dict[float, dict[str, Any]]:
    """Stable Diffusion's virtual ``aggregated_eval_accuracy`` lines: the FID and CLIP
    values logged at one ``samples_count`` merged into one dict, as the checker does."""
    merged: dict[float, dict[str, Any]] = {}
    for e in evals:
        if e.key == "eval_accuracy" and e.metric is not None and e.samples_count is not None:
            merged.setdefault(e.samples_count, {"samples_count": e.samples_count})[e.metric] = \
                e.value
    return merged
