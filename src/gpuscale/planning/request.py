"""One plan request: what ``gpuscale plan`` and ``gpuscale.planning`` are asked, written once.

The CLI builds a :class:`PlanRequest` from its options; ``gpuscale.planning`` takes one (or the
same fields as keywords). Validation happens here, so both paths refuse the same input
with the same message.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from gpuscale.tables import DEFAULT_EFFICIENCY_THRESHOLD
from gpuscale.tables.refusals import Range, check_ranges
from gpuscale.tables.requests import (
    POWER_RANGE,
    PRICE_RANGE,
    FieldError,
    JsonRequest,
    clipped,
    given_twice,
    option,
    power_option,
    price_option,
    single_option,
)

MAX_DEVICES = 1_000_000
# Each count is predicted with its interval (a few ms): a plan is of at most this many.
MAX_COUNTS = 1_000
RANGE = f"counts must be from 1 to {MAX_DEVICES:,}"
# Each number's range (lowest, highest, lowest excluded?), said as advise says its own;
# the price and power as advise takes them (one range each, whichever command refuses).
RANGES: dict[str, Range] = {
    "devices_per_node": (1, 4096, False),
    "price_per_device_hour": PRICE_RANGE,
    "power_w": POWER_RANGE,
    "threshold": (0, 1, True),
}


def _range_counts(part: str, low: int, high: int, step: int | None) -> list[int]:
    """The counts of one range, bounded before any list is built."""
    if low < 1 or high < low:
        raise ValueError(f"device range {part!r}: need 1 <= low <= high")
    if high > MAX_DEVICES:
        raise ValueError(f"device range {part!r}: counts go up to {MAX_DEVICES:,}")
    if step is None:  # powers of two from low
        return [low << k for k in range(64) if low << k <= high]
    if step < 1:
        raise ValueError(f"device range {part!r}: the step must be >= 1")
    if (high - low) // step + 1 > MAX_COUNTS:
        raise ValueError(
            f"device range {part!r} holds {(high - low) // step + 1:,} counts: a plan predicts "
            f"at most {MAX_COUNTS:,}; use a larger step (e.g. {low}-{high}:"
            f"{max(step, -(-(high - low) // (MAX_COUNTS - 1)))}) or powers of two ({low}-{high})"
        )
    return list(range(low, high + 1, step))


def _count(digits: str) -> int:
    """A count's digits as a number; one past any count planned (``MAX_DEVICES``) where
    they are more than 12 (a plan refuses it by its range, as 2,000,000: never int()'s own
    limit on long numbers)."""
    return int(digits) if len(digits.lstrip("0")) <= 12 else MAX_DEVICES + 1


def parse_devices(text: str) -> tuple[int, ...]:
    """``8,16,64`` -> (8, 16, 64); ``8-256`` -> powers of two from 8 to 256; ``8-64:8``
    -> 8, 16, ..., 64. ValueError on anything else, on a count given twice (``8,16,16``,
    ``8-64,16``), and past ``MAX_DEVICES`` or ``MAX_COUNTS`` counts (checked before any
    list is built)."""
    out: list[int] = []
    parts = [p.strip() for p in str(text).split(",")]
    if len(parts) > 1 and not all(parts):  # `8,,16` is a typo, not 8,16
        raise ValueError("an empty count between commas (or at an end)")
    parts = [p for p in parts if p]
    if len(parts) > MAX_COUNTS:
        raise ValueError(f"{len(parts):,} device counts: a plan predicts at most {MAX_COUNTS:,}")
    for part in parts:
        # ASCII digits only: str.isdigit() takes '²', which int() then refuses
        match = re.fullmatch(r"([0-9]+)\s*-\s*([0-9]+)(?:\s*:\s*([0-9]+))?", part)
        if match:
            low, high = _count(match.group(1)), _count(match.group(2))
            step = _count(match.group(3)) if match.group(3) else None
            out.extend(_range_counts(part, low, high, step))
        elif re.fullmatch(r"[0-9]+", part) and 1 <= _count(part) <= MAX_DEVICES:
            out.append(_count(part))
        elif re.fullmatch(r"-?\s*[0-9]+", part):  # `0`, `-5`, `2000000`: said as typed
            raise ValueError(f"{RANGE} (not {clipped(part)})")
        else:
            raise ValueError(
                f"device count {part!r} is not a whole number or a range "
                "(e.g. 8,16,64 or 8-256 or 8-64:8)"
            )
        if len(out) > MAX_COUNTS:
            raise ValueError(
                f"more than {MAX_COUNTS:,} device counts: a plan predicts at most that"
            )
    if twice := given_twice(out, "count"):  # `8,16,16` planned 8,16 without a word
        raise ValueError(twice)
    if not out:
        raise ValueError(
            "no device count given (e.g. devices=[8, 16, 64]; --devices 8,16,64 on the "
            "command line)"
        )
    return tuple(sorted(set(out)))


def _whole_counts(devices: object) -> tuple[int, ...]:
    """Device counts given as numbers: whole and finite, or ValueError/TypeError saying
    which is not."""
    if isinstance(devices, numbers.Integral) and not isinstance(devices, bool):
        devices = [devices]  # one count (`devices=8`): as `--devices 8` reads
    if isinstance(devices, str | bytes) or not hasattr(devices, "__iter__"):
        raise TypeError(f"devices must be counts (e.g. [8, 16, 64]) or text, not {devices!r}")
    counts = list(devices)  # type: ignore[call-overload]
    if len(counts) > MAX_COUNTS:
        raise ValueError(f"{len(counts):,} device counts: a plan predicts at most {MAX_COUNTS:,}")
    out = []
    for d in counts:
        # numbers.Real: numpy's integers and floats too (a count read from a table)
        if isinstance(d, bool) or not isinstance(d, numbers.Real):
            raise TypeError(f"devices must be whole numbers, not {d!r}")
        if not isinstance(d, numbers.Integral) and not (
            math.isfinite(float(d)) and float(d).is_integer()
        ):
            raise ValueError(f"devices must be whole numbers: {d!r} is not")
        out.append(int(d))
    if twice := given_twice(out, "count"):  # as `--devices 8,16,16` is refused
        raise ValueError(twice)
    return tuple(sorted(set(out)))


@dataclass(frozen=True, kw_only=True, slots=True)
class PlanRequest(JsonRequest):
    """What to plan: each field's help (the ``plan`` option's) in its metadata.
    ``devices`` may be given as a string (``"8,16,64"``, ``"8-256"``) or a sequence of
    counts."""

    json_name: ClassVar[str] = "plan request"
    field_ranges: ClassVar[Mapping[str, Range]] = RANGES
    workload: str = single_option(
        what="workload",
        names=("--workload", "-w", "--benchmark", "-b"),  # -b as the MLPerf commands
        help="MLPerf benchmark or the study's name (e.g. llama2_70b_lora, bert, sd).",
        required=True,
    )
    accelerator: str = single_option(
        what="accelerator",
        names=("--accelerator", "-a"),
        help="Accelerator or family (e.g. H100 = H100-SXM5-80GB, B200, MI300X).",
        required=True,
    )
    devices: tuple[int, ...] = option(
        (8, 16, 32, 64, 128, 256),
        names=("--devices", "-n"),
        cli=str,
        shown="8,16,32,64,128,256",
        help="Device counts: a list (8,16,64) or a range (8-256: powers of two; "
        "8-64:8 in steps of 8).",
    )
    devices_per_node: int | None = option(
        None,
        names=("--devices-per-node",),
        help="Devices per node (the nodes shown, the memory check's node); default: the "
        "most common among the family's systems in the rounds (TPU-v5p 4), else 8.",
    )
    interconnect: str | None = option(
        None,
        names=("--interconnect",),
        help="Interconnect of the planned cluster, as free text (noted, not modelled).",
    )
    price_per_device_hour: float | None = price_option()
    power_w: float | None = power_option("without it, no energy column")
    threshold: float = option(
        DEFAULT_EFFICIENCY_THRESHOLD,
        names=("--threshold",),
        help="Efficiency threshold of the equilibrium criterion E' >= threshold x best.",
    )

    def __post_init__(self) -> None:
        for name in ("workload", "accelerator"):
            value = getattr(self, name)
            if not isinstance(value, str):
                raise TypeError(f"{name} must be text (a name), not {value!r}")
        missing = [
            (name, "", f"required ({what})")
            for name, what in (
                ("workload", "an MLPerf benchmark or the study's name, e.g. bert"),
                ("accelerator", "an accelerator or family, e.g. H100"),
            )
            if not getattr(self, name).strip()
        ]
        if missing:  # both named at once: `gpuscale plan` alone lacks both
            raise FieldError(*missing[0], more=tuple(missing[1:]))
        if self.interconnect is not None and not isinstance(self.interconnect, str):
            raise TypeError(f"interconnect must be text, not {self.interconnect!r}")
        given = self.devices
        try:
            devices = parse_devices(given) if isinstance(given, str) else _whole_counts(given)
        except ValueError as exc:  # the field named: the CLI says --devices
            raise FieldError("devices", given, str(exc)) from None
        object.__setattr__(self, "devices", devices)
        if not devices:  # `plan(devices=())`: no count, not one out of range
            raise FieldError("devices", given, "no count given: give one or more, e.g. 8")
        if out := [d for d in devices if not 1 <= d <= MAX_DEVICES]:  # the count said
            raise FieldError("devices", given, f"{RANGE} (not {out[0]:,})")
        check_ranges(self, RANGES, {})
