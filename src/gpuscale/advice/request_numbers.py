"""The numbers of an advice request, checked where it is made: each one's type and range,
the devices its nodes hold, and step times at several batches as (step, batch) pairs."""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import fields

from gpuscale.advice.request_fields import RequestFields
from gpuscale.quantities import agreeing, counted, number
from gpuscale.tables.requests import FieldError, NamedError, help_of, ref

# Fields read as sizes: a size as text is for the command line (its message says so).
_SIZES = frozenset({"params", "flops_per_sample", "noise_scale", "samples"})
MAX_DEVICES = 1_000_000
# Each number's range: (lowest, highest, whole?, lowest excluded?). Past these a value
# is a typo or a unit mistake (a batch of 10^23, a bucket of 10^-310 MiB), never a
# request to carry into the model: refused where it is given.
_RANGES: dict[str, tuple[float, float, bool, bool]] = {
    "params": (1, 1e14, False, False),  # a model has at least one parameter
    "step_ms": (1e-3, 1e8, False, False),  # 1 us .. 28 h per step
    "fixed_ms": (0, 1e8, False, False),
    "batch": (1, 2**24, True, False),
    "flops_per_sample": (1, 1e20, False, False),  # a sample costs at least one FLOP
    "busbw_gbs": (1e-3, 1e5, False, False),  # 1 MB/s .. 100 TB/s
    "latency_us": (0, 1e7, False, False),
    "nodes": (1, 100_000, True, False),
    "gpus_per_node": (1, 4096, True, False),
    "nics_per_node": (1, 4096, True, False),
    "max_devices": (1, MAX_DEVICES, True, False),
    "overlap": (0, 1, False, False),
    "grad_bytes": (1, 8, True, False),
    "bucket_mb": (1 / 1024, 2**20, False, False),  # 1 KiB .. 1 TiB
    "noise_scale": (1, 1e15, False, False),  # a batch in samples: below one means nothing
    "samples": (1, 1e16, False, False),  # at least one sample is trained on
    "global_batch": (1, 2**31 - 1, True, False),
    "target_efficiency": (0, 1, False, True),
    "price": (0, 1e9, False, False),
    "power_w": (0, 1e5, False, True),  # a device drawing 0 W cannot run
    # a transformer's shape (``hardware.transformer``): at least one of each, and past
    # these a typo (the largest published: 126 layers, hidden 53,248, 1M-token contexts)
    "layers": (1, 100_000, True, False),
    "hidden": (1, 10_000_000, True, False),
    "heads": (1, 1_000_000, True, False),
    "seq_len": (1, 2**30, True, False),
    "vocab": (1, 100_000_000, True, False),
}


def _check_type(name: str, value: object, whole: bool) -> None:
    if value is None:
        return
    # numbers.Real: numpy's integers and floats too (a value read from a table)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        hint = ""
        if isinstance(value, str) and name in _SIZES:
            hint = " (a size as text, such as '7M', is for the command line: give 7e6)"
        raise TypeError(f"{name} must be a number, not {type(value).__name__} {value!r}{hint}")
    if whole and not (
        isinstance(value, numbers.Integral)
        or (math.isfinite(float(value)) and float(value).is_integer())
    ):
        raise TypeError(f"{name} must be a whole number, not {value!r}")


def _in_range(name: str, value: object) -> bool:
    if value is None:
        return True
    low, high, _, open_low = _RANGES[name]
    number = float(value)  # type: ignore[arg-type]
    return (
        math.isfinite(number) and (number > low if open_low else number >= low) and number <= high
    )


def _rule(name: str) -> str:
    low, high, whole, open_low = _RANGES[name]
    if name == "grad_bytes":
        return "must be 1, 2, 4 or 8"
    if name == "bucket_mb":
        return "must be a number of MiB from 1/1024 (1 KiB) to 1,048,576 (1 TiB)"
    if low == 1 and whole:
        return f"must be a positive whole number, at most {_bound(high)}"
    start = f"above {_bound(low)}" if open_low else f"at least {_bound(low)}"
    return f"must be a {'whole number' if whole else 'number'} {start} and at most {_bound(high)}"


def _bound(value: float) -> str:
    """A range's end as a person reads it: ``10^16``, not 10,000,000,000,000,000."""
    exponent = math.log10(value) if value > 0 else 0.0
    if value >= 1e7 and exponent.is_integer():
        return f"10^{int(exponent)}"
    return number(value)


def _check_work_grows(points: tuple[tuple[int, float], ...]) -> None:
    """A step at a larger batch does more work: never faster than at a smaller one."""
    ordered = sorted(points)
    for (b_small, t_small), (b_large, t_large) in itertools.pairwise(ordered):
        if t_large < t_small:
            raise NamedError(
                f"{ref('step_ms', t_large)} at {ref('batch', b_large)} is faster than "
                f"{t_small:g} at {ref('batch', b_small)}: a larger batch does more work; "
                "measure both again (the same model, precision and device)"
            )


def check_numbers(request: RequestFields) -> None:
    """TypeError for a number missing (its field has a default) or of the wrong type;
    :class:`FieldError` for the first outside its range; ``NamedError`` for more devices
    than :data:`MAX_DEVICES` in the nodes."""
    optional = {f.name for f in fields(request) if f.default is None}
    given: list[tuple[str, object]] = []  # each value of a field given several times
    for name in _RANGES:
        value = getattr(request, name)
        given += [(name, v) for v in value] if isinstance(value, tuple) else [(name, value)]
    for name, value in given:
        if value is None and name not in optional:
            raise TypeError(f"{name} must be a number, not None ({help_of(request, name)})")
        _check_type(name, value, _RANGES[name][2])
    bad = [(name, value) for name, value in given if not _in_range(name, value)]
    if bad:
        name, value = bad[0]
        raise FieldError(name, value, _rule(name))
    if request.nodes * request.gpus_per_node > MAX_DEVICES:
        raise NamedError(
            f"{ref('nodes', request.nodes)} x {ref('gpus_per_node', request.gpus_per_node)} "
            f"is {request.nodes * request.gpus_per_node:,} devices: at most {MAX_DEVICES:,} "
            "are advised on"
        )


def check_step_pairs(
    steps: float | tuple[float, ...] | None,
    batches: int | tuple[int, ...] | None,
    fixed_ms: float | None,
) -> None:
    """Step times at several batches come in (step, batch) pairs of distinct batches; a
    fixed cost is below the one step time given."""
    if isinstance(steps, tuple) or isinstance(batches, tuple):
        count = len(steps) if isinstance(steps, tuple) else 1
        if not isinstance(batches, tuple) or len(batches) != count:
            given = len(batches) if isinstance(batches, tuple) else int(batches is not None)
            raise NamedError(
                f"{counted(count, 'step time')} ({ref('step_ms')}) "
                f"{agreeing(count, 'needs', 'need')} as many {ref('batch')} values, one "
                f"per step time (got {given or 'none'})"
            )
        if len(set(batches)) != len(batches):
            raise NamedError(f"the {ref('batch')} values of the step times must differ: {batches}")
        _check_work_grows(tuple(zip(batches, steps, strict=True)))  # type: ignore[arg-type]
        if fixed_ms is not None:
            raise NamedError(f"give {ref('fixed_ms')} or step times at two batches, not both")
    elif fixed_ms is not None and steps is not None and fixed_ms >= steps:
        raise NamedError(
            f"{ref('fixed_ms', fixed_ms)} is not below {ref('step_ms', steps)}: the "
            "fixed per-step cost is the part of that step that does not shrink with the batch"
        )
