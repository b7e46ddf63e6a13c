"""What one row of a results file may hold, field by field (schema ``gpuscale.bench/2``;
``/1`` rows too, whose ``config`` names the device count ``world_size``).

:func:`record_problem` checks a parsed row against :data:`RECORD_FIELDS` and says, naming
the field, why it is not usable (``timing.step_ms_mean is "12", not a number``), so a
reader skips that row with the reason and keeps the others: a value of the wrong type
never reaches the tables (where it would be a traceback, or a number read wrongly).
Fields not listed are allowed (newer writers) and left alone. Numbers are finite; times,
sizes, power and counts are not negative (a value that cannot be true is refused here,
not carried into speedups)."""

from __future__ import annotations

import math
from collections.abc import Callable

from gpuscale.bench.config import LARGEST, MAX_TIMEOUT_S, TF32_MODES
from gpuscale.quantities import number
from gpuscale.sizes import number_or_none

# A field's kind: "text", "bool", "int" (whole, >= 0), "count" (whole, >= 1), "real"
# (finite, >= 0), "signed" (finite, any sign), "ms" / "signed_ms" (those, a time a bench
# can take), "mib" (a DDP bucket), "texts" / "reals" / "ints" (lists of those),
# "rows" (a list of lists of reals, one per rank), "object" (any JSON object), "tf32" (a
# mode of ``TF32_MODES``, or true / false as rows written before the modes said).
RECORD_FIELDS: dict[str, str] = {
    "schema": "text",
    "key": "text",
    "status": "text",
    "sweep_id": "text",
    "started_at": "text",
    "duration_s": "real",
    "error": "text",
    "flags": "texts",
    "environment": "object",
    "grad_bytes_per_step": "int",
    "allreduce_bytes_per_step": "int",
    # the last timed step's loss; null where it was not finite (gpuscale writes), and a
    # NaN or inf another writer left (json's NaN) is a loss too: flagged on read, not skipped
    "loss_last": "loss",
}
CONFIG_FIELDS: dict[str, str] = {
    "model": "text",
    "family": "text",
    "params": "int",
    "accelerators": "count",
    "world_size": "count",
    "nnodes": "count",
    "backend": "text",
    "device": "text",
    "batch": "count",
    "batch_per_device": "count",
    "global_batch": "count",
    "accum": "count",
    "precision": "text",
    "tf32": "tf32",
    "strategy": "text",
    "bucket_mb": "mib",
    "grad_comm": "text",
    "steps": "count",
    "warmup": "int",
    "threads": "int",
    "scaling": "text",
    "timeout_s": "real",
    "nvml": "bool",
    "repeat": "count",
    "memory_limit_bytes": "int",
}
# The objects inside a row and their fields.
SECTIONS: dict[str, dict[str, str]] = {
    "config": CONFIG_FIELDS,
    "timing": {
        "step_ms_mean": "ms",
        "step_ms_p50": "ms",
        "step_ms_p95": "ms",
        "nosync_step_ms_mean": "ms",
        "nosync_step_ms_p50": "ms",
        "nosync_step_ms_p95": "ms",
        "plain_step_ms_mean": "ms",
        "plain_step_ms_p50": "ms",
        "samples_per_s": "real",
        "forward_ms": "ms",
        "backward_ms": "ms",
        "optimizer_ms": "ms",
        "sync_overhead_ms": "signed_ms",  # a difference of two steps: jitter makes it negative
        "exposed_comm_ms": "signed_ms",  # gpuscale.bench/1's name for it
        "comm_ms": "ms",
        "repeat_samples_per_s": "reals",
        "repeat_spread": "real",
        # N = 1: the bare step at a second batch, and the fixed cost from the two
        "small_batch_per_device": "real",
        "small_batch_step_ms_mean": "ms",
        "fixed_ms": "ms",
        "fixed_ms_low": "ms",
        "fixed_ms_high": "ms",
    },
    "per_rank": {"step_ms": "rows", "nosync_step_ms": "rows"},
    "memory": {"peak_bytes": "int", "kind": "text"},
    "flops": {
        "per_sample": "real",
        "achieved_tflops_per_device": "real",
        "peak_tflops": "real",
        "mfu": "real",
        "uncounted_ops": "texts",
        "conv_per_sample": "real",
    },
    "noise": {
        "batch_small": "count",
        "batch_big": "count",
        "local_sq": "reals",
        "global_sq": "reals",
    },
    "nvml": {
        "gpu_util_pct_mean": "real",
        "power_w_mean": "real",
        "power_w_total": "real",
        "energy_j_per_step": "real",
        "power_source": "text",
        "power_dropouts": "int",  # readings at ~0 W, failed, or missing (telemetry)
        "power_uncovered_s": "real",  # seconds of the phase no reading covered
    },
    # the tick shares; the run queue's waits of the most-waiting rank (telemetry.run_queue)
    "host": {
        "other_load_share": "real",
        "steal_share": "real",
        "queued_ms": "real",
        "cpu_ms": "real",
        "rank_cpu_ms": "real",
        "wall_ms": "real",
    },
    # one step's global batch: its samples drawn (per-device batch x N) and those distinct
    "data": {"samples_drawn": "count", "samples_distinct": "count"},
    "comm": {"bucket_bytes": "ints"},
}
# The largest whole number a row may hold (2^53: a float64 holds it exactly).
_MOST = 2**53
# An ok run's whole steps and its rate: above 0 (a phase, a comm or fixed cost may be 0).
WHOLE_STEP = (
    "step_ms_mean",
    "step_ms_p50",
    "step_ms_p95",
    "nosync_step_ms_mean",
    "nosync_step_ms_p50",
    "nosync_step_ms_p95",
    "plain_step_ms_mean",
    "plain_step_ms_p50",
    "small_batch_step_ms_mean",
    "samples_per_s",
)
# The longest time a row may hold, ms: the most --timeout gives a model (30 days).
_MOST_MS = MAX_TIMEOUT_S * 1e3


def _is_int(value: object, low: int) -> bool:
    count = number_or_none(value, whole=True)
    return count is not None and low <= count <= _MOST


def _is_real(value: object, signed: bool = False) -> bool:
    number = number_or_none(value)
    if number is None or not math.isfinite(number):
        return False
    return (signed or number >= 0) and abs(number) <= 1e300


def _each(check: Callable[[object], bool]) -> Callable[[object], bool]:
    return lambda v: isinstance(v, list) and all(check(x) for x in v)


_CHECKS = {
    "text": (lambda v: isinstance(v, str), "text"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
    "int": (lambda v: _is_int(v, 0), "a whole number >= 0"),
    "count": (lambda v: _is_int(v, 1), "a whole number >= 1"),
    "real": (_is_real, "a finite number >= 0"),
    "signed": (lambda v: _is_real(v, signed=True), "a finite number"),
    # a time no bench times: longer than the longest run --timeout lets a model have
    "ms": (lambda v: _is_real(v) and v <= _MOST_MS, f"a number of ms from 0 to {_MOST_MS:,.0f}"),
    "signed_ms": (
        lambda v: _is_real(v, signed=True) and abs(v) <= _MOST_MS,
        f"a number of ms from -{_MOST_MS:,.0f} to {_MOST_MS:,.0f}",
    ),
    "mib": (  # what --bucket-mb takes
        lambda v: _is_real(v) and 1 / 1024 <= v <= 2**20,
        "a number of MiB from 1/1024 to 1,048,576",
    ),
    "loss": (lambda v: number_or_none(v) is not None, "a number"),
    "texts": (_each(lambda x: isinstance(x, str)), "a list of text"),
    "reals": (_each(_is_real), "a list of numbers"),
    "ints": (_each(lambda x: _is_int(x, 0)), "a list of sizes"),
    "rows": (_each(_each(_is_real)), "a list of lists of numbers (one per rank)"),
    "object": (lambda v: isinstance(v, dict), "an object"),
    "tf32": (
        lambda v: isinstance(v, bool) or v in TF32_MODES,
        f"one of {', '.join(TF32_MODES)} (or true / false)",
    ),
}


def conv_share(flops: dict[str, object]) -> float:
    """The share of a record's FLOPs per sample in convolutions (``flops``: its ``flops``
    field), 0 where not recorded: cuDNN runs those in TF32 by default."""
    total, conv = flops.get("per_sample"), flops.get("conv_per_sample")
    return conv / total if total and conv else 0.0


def _shown(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _said(value: object) -> str:
    """A number a message compares with another, every one alike: 4 significant figures
    (1.875, 2,500,000,000), as the value computed beside it is written."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number(value, 4)
    return _shown(value)


def _field_problem(name: str, value: object, kind: str) -> str | None:
    ok, expected = _CHECKS[kind]
    if value is None or ok(value):
        return None
    if kind in ("int", "count") and isinstance(value, float) and value.is_integer():
        expected += f" written as an integer ({value:.0f}, not {value!r})"
    return f"{name} is {_shown(value)}, not {expected}"


def record_problem(record: object) -> str | None:
    """Why a parsed row is not usable, naming the field; None when it is."""
    if not isinstance(record, dict):
        return "not a JSON object"
    for name, kind in RECORD_FIELDS.items():
        if problem := _field_problem(name, record.get(name), kind):
            return problem
    if not record.get("key"):
        return "no key"
    for section, fields in SECTIONS.items():
        value = record.get(section)
        if value is None and section != "config":
            continue
        if not isinstance(value, dict):
            return f"{section} is {_shown(value)}, not an object"
        for name, kind in fields.items():
            if problem := _field_problem(f"{section}.{name}", value.get(name), kind):
                return problem
    timing = record.get("timing") or {}
    low, fixed, high = (timing.get(f"fixed_ms{end}") for end in ("_low", "", "_high"))
    if None not in (low, fixed, high) and not low <= fixed <= high:  # the bench writes so
        return (
            f"timing.fixed_ms {_said(fixed)} is not within its 80% range, fixed_ms_low "
            f"{_said(low)} to fixed_ms_high {_said(high)}"
        )
    config = record["config"]
    taken = {**LARGEST, "batch_per_device": LARGEST["batch"], "timeout_s": MAX_TIMEOUT_S}
    for name, most in taken.items():  # what the bench takes (a row's own run), no more
        if (value := config.get(name)) is not None and value > most:
            return f"config.{name} is {_said(value)}, more than a bench takes ({_said(most)})"
    if not isinstance(config.get("model"), str) or not config["model"]:
        return "config.model is missing"
    if config.get("accelerators", config.get("world_size")) is None:
        return "config.accelerators is missing"
    if record.get("status") == "ok" and config.get("params") == 0:  # the bench refuses one
        return "config.params is 0: a run recorded ok trained a model with parameters"
    if record.get("status") == "ok":
        for name in WHOLE_STEP:  # a step a bench timed whole took time, at some rate
            if (value := timing.get(name)) is not None and value <= 0:
                return f"timing.{name} is {_shown(value)}: a run recorded ok took time to step"
    if record.get("status") == "ok" and (record.get("timing") or {}).get("samples_per_s") is None:
        # an ok run always records its rate: without it the row is no measurement (at
        # N = 1 it would leave its configuration no baseline)
        return "timing.samples_per_s is missing: a run recorded ok measured its rate"
    if record.get("status") == "ok" and (record.get("timing") or {}).get("step_ms_mean") is None:
        # and its mean step, which the advice's calibration and its interval read
        return "timing.step_ms_mean is missing: a run recorded ok timed its steps"
    return _contradiction(config, timing if record.get("status") == "ok" else {}, record)


# How far a row's fields may disagree where the bench writes one from the others. The
# results files of tests/, benchmarks/ and the H100 sweeps (61 ok rows) agree exactly: the
# global batch is batch x devices x accumulation, the step means are those of per_rank's
# slowest rank per step (to 2e-16), no phase is above 0.66 of its no-sync step, the rate
# is the global batch over the mean step (to 1e-6). A value rounded to 3 significant
# digits stays within _ROUNDING. The rate is held to a factor of _RATE only: rows built by
# hand to test a speedup set the rate apart from the step (0.02 to 1.4 times it).
_ROUNDING = 0.01
_TICK = 0.001  # ms: a CUDA event's resolution is 0.5 us, a phase and its step each read off one
_RATE = 100.0


def _contradiction(
    config: dict[str, object], timing: dict[str, object], record: dict[str, object]
) -> str | None:
    """Where two fields of a row that the bench writes one from the other disagree (a
    hand-edited row: a global batch of 17 for 8 per device on 2, a phase longer than its
    step), naming both; None where they agree or one is not recorded."""
    devices = config.get("accelerators", config.get("world_size"))
    each, accum, batch = config.get("batch_per_device"), config.get("accum") or 1, None
    if None not in (devices, each):
        batch = each * devices * accum
        if (given := config.get("global_batch")) is not None and given != batch:
            return (
                f"config.global_batch {_said(given)} is not config.batch_per_device "
                f"{_said(each)} x config.accelerators {_said(devices)} x config.accum "
                f"{_said(accum)} ({_said(batch)})"
            )
    for name, kind in (("step_ms_mean", "step_ms"), ("nosync_step_ms_mean", "nosync_step_ms")):
        ranks = ((record.get("per_rank") or {}) if timing else {}).get(kind) or []
        if timing.get(name) is None or not all(ranks) or len({len(r) for r in ranks}) != 1:
            continue
        slowest = math.fsum(max(step) for step in zip(*ranks, strict=True)) / len(ranks[0])
        if abs(timing[name] - slowest) > _ROUNDING * slowest:
            return (
                f"timing.{name} {_said(timing[name])} is not the mean of per_rank.{kind}'s "
                f"slowest rank per step ({_said(slowest)} ms)"
            )
    whole = "nosync_step_ms_mean" if timing.get("nosync_step_ms_mean") else "step_ms_mean"
    step = timing.get(whole)
    longest = None if step is None else step * (1 + _ROUNDING) + _TICK
    for phase in ("forward_ms", "backward_ms", "optimizer_ms"):  # timed in the no-sync step
        if None not in (longest, value := timing.get(phase)) and value > longest:
            return (
                f"timing.{phase} {_said(value)} is longer than the step it is part of "
                f"(timing.{whole} {_said(step)})"
            )
    rate, step = timing.get("samples_per_s"), timing.get("step_ms_mean")
    batch = config.get("global_batch", batch)
    if None not in (rate, step, batch) and not 1 / _RATE <= rate * step / 1e3 / batch <= _RATE:
        return (
            f"timing.samples_per_s {_said(rate)} is not config.global_batch {_said(batch)} "
            f"over timing.step_ms_mean {_said(step)} ({_said(batch / step * 1e3)})"
        )
    return None
