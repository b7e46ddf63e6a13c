"""The power's words: where a device's watts come from (:func:`power_source`), what each
count is charged (:func:`source_at`, the predictions' ``energy_source``) and the
explanation's sentence over every count (:func:`said`)."""

from __future__ import annotations

from collections.abc import Iterable

from gpuscale.advice.calibration import Power
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.hardware.power import charged_at, whole_job_w
from gpuscale.quantities import agreeing, counted, filled, joined, noun_for

# What power at the nearest measured batch likely is, by whether the counts' batches are
# all smaller than it (lower: an upper estimate) or not (higher)
LIKELY = {True: "power_smaller", False: "power_larger"}


def power_source(power: Power) -> str:
    """Where ``power`` comes from: its kind, the batches its N = 1 runs measured, the link
    that implies the device."""
    values = {"meter": power.meter, "device": power.device, "watts": power.watts}
    source = sentence(
        "power_source", kind=power.kind.value, assumed=power.assumed or None, **values
    )
    if power.measured and power.at_batch:
        batches = tuple(float(b) for b, _ in power.at_batch)
        source = sentence("power_by_batches", source=source, batches=batches)
    if power.implied_by is not None:
        source = sentence("power_implied", source=source, implied_by=power.implied_by)
    return source


def per_device_source(power: Power, batch: float | None) -> str:
    """Where the watts per device at per-device ``batch`` come from (``Power.per_device``)."""
    if not power.at_batch or batch is None:
        return power.source
    kind = f"measured ({power.meter}) by an N = 1 run"
    how, batches = charged_at(power.at_batch, batch)
    if how == "own":
        return f"{kind} at batch {batch:g}"
    if how == "between":
        (low, high), measured = batches, dict(power.at_batch)
        values = {"low_w": measured[low], "high_w": measured[high]}
        return sentence("power_interpolated", meter=power.meter, low=low, high=high, **values)
    return sentence("power_nearest", kind=kind, nearest=batches[0], batch=batch)


def source_at(power: Power, devices: int, batch: float | None = None) -> str:
    """Where the watts of ``devices`` at per-device ``batch`` come from."""
    if whole_job_w(power.total_w_at, devices, batch) is not None:
        return f"measured at {counted(devices, 'device')} (whole job)"
    if power.per_device(batch) is None:
        return "unknown"
    source = per_device_source(power, batch)
    return agreeing(devices, source, f"{source} x {devices}")


def said(power: Power, counts: Iterable[tuple[int, float | None]]) -> str:
    """The source, then how each of ``counts`` ((N, per-device batch)) is charged."""
    if not power.at_batch:
        return power.source
    groups: dict[tuple[str, tuple[float, ...]], list[tuple[int, float]]] = {}
    for n, b in counts:
        if b is None:
            continue
        whole = whole_job_w(power.total_w_at, n, b) is not None
        key = ("whole", ()) if whole else charged_at(power.at_batch, b)
        groups.setdefault(key, []).append((int(n), float(b)))
    parts = [_charged(how, batches, rows) for (how, batches), rows in groups.items()]
    return sentence("power_said", source=power.source, charged=filled("; {}", "; ".join(parts)))


def _charged(how: str, batches: tuple[float, ...], rows: list[tuple[int, float]]) -> str:
    counts = [n for n, _ in rows]
    on = f"{joined(counts)} {noun_for(sum(counts), 'device')}"  # 2, 4 and 8 devices
    at = joined(f"{b:g}" for b in dict.fromkeys(b for _, b in rows))
    if how == "whole":
        return sentence("power_whole", on=on)
    if how == "own":
        return sentence("power_own", on=on, at=at)
    if how == "between":
        low, high = batches
        return sentence("power_between", on=on, at=at, low=low, high=high)
    nearest = batches[0]
    likely = sentence(LIKELY[all(b < nearest for _, b in rows)])
    return sentence("power_nearest_rows", on=on, at=at, nearest=nearest, likely=likely)
