"""One advice request: what the user asked (``advice.request_fields``), each number of it
checked where it is made (its type and range), and the options together
(``advice.conflicts``). The CLI's ``advise`` options are generated from its fields."""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, fields

from gpuscale.advice.conflicts import check_options
from gpuscale.advice.request_fields import RequestFields
from gpuscale.quantities import number
from gpuscale.tables.requests import FieldError, NamedError, help_of, ref


@dataclass(frozen=True, kw_only=True, slots=True)
class AdviceRequest(RequestFields):
    """:class:`RequestFields`, each number in its range and the options agreeing."""

    def __post_init__(self) -> None:
        for name in ("step_ms", "batch"):  # given several times: a tuple; once: the value
            value = getattr(self, name)
            if isinstance(value, list | tuple):
                object.__setattr__(self, name, tuple(value) if len(value) > 1 else value[0])
        check_numbers(self)
        check_options(self)

    @classmethod
    def of(cls, request: AdviceRequest | None = None, **keywords: object) -> AdviceRequest:
        if request is None:
            return cls(**keywords)
        return cls(**(asdict(request) | keywords))


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
    for name, value in given:
        if not _in_range(name, value):
            raise FieldError(name, value, _rule(name))
    if request.nodes * request.gpus_per_node > MAX_DEVICES:
        raise NamedError(
            f"{ref('nodes', request.nodes)} x {ref('gpus_per_node', request.gpus_per_node)} "
            f"is {request.nodes * request.gpus_per_node:,} devices: at most {MAX_DEVICES:,} "
            "are advised on"
        )
