"""The words a calibration's build leaves as numbers, said once it is built (``api``: build,
:func:`worded`, then the search): the convergence model the bench's noise scale gives,
the memory check's sources, and where the power comes from, per device count too."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace

from gpuscale.advice.calibration import Calibration, Power
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.explain.runs import on_devices
from gpuscale.advice.types import TermId
from gpuscale.analysis.critical_batch import NoiseScale
from gpuscale.hardware.power import charged_at, whole_job_w
from gpuscale.quantities import agreeing, counted, filled, joined


def worded(cal: Calibration) -> Calibration:
    """``cal`` with the words of its convergence, power and memory check."""
    power = cal.machine.power
    if not power.source:
        cal = cal.at({"machine": {"power": replace(power, source=power_source(power))}})
    return _memory_worded(_convergence_worded(cal))


def measured_noise(noise: NoiseScale) -> str:
    """The bench's measured ``B_simple`` with its steps and 95% interval, the upper end
    said unbounded where the resamples found no signal (``high`` infinite)."""
    return sentence("b_simple_measured", n=noise, bounded=math.isfinite(noise.high))


def _convergence_worded(cal: Calibration) -> Calibration:
    """``cal`` with the source of a convergence model the bench's noise scale gives (its
    ``B_simple``, steps and interval) in words, the model's and its assumption's."""
    model, noise = cal.search.convergence, None if cal.bench is None else cal.bench.noise
    if model is None or cal.search.noise_steps is None or noise is None:  # priced otherwise
        return cal
    source = measured_noise(noise)
    assumed = tuple(
        replace(a, basis=source) if a.term is TermId.CONVERGENCE else a
        for a in cal.said.assumptions
    )
    return cal.at(
        {"search": {"convergence": replace(model, source=source)}, "said": {"assumptions": assumed}}
    )


def _memory_worded(cal: Calibration) -> Calibration:
    """``cal`` with its memory check's sources in words: the device assumed, the bench's
    peak less the model state it held, the transformer's shape counted, or neither."""
    memory, said = cal.machine.memory, cal.machine.memory_said
    if memory is None:
        return cal
    device = memory.device
    if said.device_assumed:
        device = replace(device, assumed=sentence("device_assumed"))
    source = sentence("memory_not_counted")
    counted = memory.activations_counted
    if said.peak_gb is not None:
        source = sentence("memory_rest", m=said)
    elif counted is not None:
        checkpointing = counted.checkpointing.value
        source = sentence("memory_shape", a=counted, checkpointing=checkpointing)
    worded = replace(memory, device=device, activations_source=source)
    return replace(cal, machine=replace(cal.machine, memory=worded))


def power_source(power: Power) -> str:
    """Where ``power`` comes from: its kind, the batches its N = 1 runs measured, the link
    that implies the device."""
    source = sentence("power_source", p=power, kind=power.kind.value, assumed=power.assumed or None)
    if power.measured and power.at_batch:
        batches = tuple(float(b) for b, _ in power.at_batch)
        source = sentence("power_by_batches", source=source, batches=batches)
    if power.implied_by is not None:
        source = sentence("power_implied", source=source, implied_by=power.implied_by)
    return source


def source_at(power: Power, devices: int, batch: float | None = None) -> str:
    """Where the watts of ``devices`` at per-device ``batch`` come from."""
    if whole_job_w(power.total_w_at, devices, batch) is not None:
        return f"measured at {counted(devices, 'device')} (whole job)"
    if power.per_device(batch) is None:
        return "unknown"
    source = power.source
    if power.at_batch and batch is not None:  # per device, from the N = 1 runs' batches
        how, batches = charged_at(power.at_batch, batch)
        watts = [dict(power.at_batch)[b] for b in batches]
        source = sentence("power_per_device", p=power, how=how, batch=batch, b=batches, w=watts)
    return agreeing(devices, source, f"{source} x {devices}")


def power_said(power: Power, counts: Iterable[tuple[int, float | None]]) -> str:
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
    return sentence(
        "power_charged",
        how=how,
        on=on_devices(counts),  # the counts in order: 2, 4 and 8 devices
        at=joined(f"{b:g}" for b in dict.fromkeys(b for _, b in rows)),
        batches=batches,
        # all smaller than the nearest measured: its power likely higher than theirs
        smaller=bool(batches) and all(b < batches[0] for _, b in rows),
    )
