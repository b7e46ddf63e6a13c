"""What qualifies the numbers, said before them: the sources a calibration's build leaves as
numbers (the convergence model the bench's noise scale gives, the memory check's, the power's
per device count), where memory limits the counts, and each count the bench measured against
its prediction (those outside the interval, the disagreements, first)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import replace

from gpuscale.advice.calibration import Calibration, Power
from gpuscale.advice.explain.phrasebook import sentence, strategy_name
from gpuscale.advice.explain.runs import on_devices
from gpuscale.advice.memory import MemoryCheck
from gpuscale.advice.records import TRUSTED_ALLOWED, MeasuredCount
from gpuscale.advice.types import Finding, TermId, Value
from gpuscale.advice.types import FindingKind as K
from gpuscale.analysis.critical_batch import NoiseScale
from gpuscale.hardware.memory import GATHERED, GATHERED_UNITS
from gpuscale.hardware.power import charged_at, whole_job_w
from gpuscale.quantities import (
    agreeing,
    counted,
    filled,
    format_count,
    joined,
    number,
    with_article,
)
from gpuscale.tables.advice import TOO_WIDE_TO_TEST

# the findings of a count capped at the topology's GPUs (``calibrate.link.device_cap``)
CAPS = (K.ONE_GPU, K.TOPOLOGY_CAP)


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


def _held(memory: MemoryCheck) -> str:
    """``16 bytes a parameter: Adam, mixed precision; activations not counted``."""
    shape, by_count = memory.activations_counted, memory.activations_by_count
    least = by_count[-1][1] if shape is not None and by_count else None
    how = "bench" if shape is None else ("least" if least is not None else "shape")
    fallback = memory.fallback[0] if memory.fallback is not None else memory.strategy
    gathered = {memory.strategy, fallback} & set(GATHERED)  # the strategies said
    return sentence(
        "memory_held",
        bytes=memory.state.bytes_per_param,
        optimizer=memory.state.optimizer.replace("_", " "),
        precision=memory.state.precision,
        activations=memory.activations_gb,
        how=how,
        recomputed=shape and shape.checkpointing.value,
        micro_batch=shape and shape.micro_batch,
        least_gb=least and least.total_gb,
        least_at=least and least.micro_batch,
        gathered=memory.gathered_gb if gathered else None,
        units=GATHERED_UNITS,
    )


def _said(memory: MemoryCheck, **values: Value) -> dict[str, Value]:
    """The model, its device and what it holds, as every memory sentence names them: the
    device in GB, as every size the sentence compares with it."""
    device = memory.device
    assumed = filled("; assumed: {}", device.assumed)
    return {
        "model": f"{with_article(format_count(memory.params))}-parameter model",
        "device": f"the {device.memory.family} ({device.memory.said()}{assumed})",
        "held": _held(memory),
        **values,
    }


def memory_said(memory: MemoryCheck | None, advised: str, count: int) -> str:
    """The sentence said first where memory limits the counts ("" where not): from which count
    the strategy asked, or the one ``advised`` (``MemoryCheck.fallback``), holds the model."""
    if memory is None or not memory.limits:
        return ""
    asked, fewest = memory.strategy, memory.fits_from(advised)
    if fewest is not None and count < fewest:  # the answer says why that count has no row
        return sentence(
            "memory", **_said(memory, case="from", name=strategy_name(advised), n=fewest)
        )
    fits = memory.fits_from(asked)
    if fits is not None:
        each = memory.at(asked, fits).total_gb
        return sentence(
            "memory", **_said(memory, case="fits", name=strategy_name(asked), n=fits, each=each)
        )
    if memory.fallback is None:
        return nothing_fits(memory)
    strategy, devices = memory.fallback
    others = [
        f"{strategy_name(s)} from {n}"
        for s, n in memory.fewest
        if s not in (asked, strategy) and n is not None and s != "hybrid"
    ]
    least, everywhere = memory.least(asked)  # one device's whole state is not the miss
    return sentence(
        "memory",
        **_said(memory, case="cannot", name=strategy_name(strategy), n=devices),
        asked=strategy_name(asked),
        least=least.total_gb,
        least_n=None if everywhere else least.devices,
        strategy=strategy,
        each=memory.at(strategy, devices).total_gb,
        also=filled("; {}", ", ".join(others)),
    )


def nothing_fits(memory: MemoryCheck, capped: Iterable[str | Finding] = ()) -> str:
    """Why no count searched holds the model under any strategy, and the fewest that
    would with what lifts the cap of those ``capped`` (the calibration's sources), or what
    else shrinks a shape's activations (whole on every device)."""
    shape, would = memory.activations_counted, memory.would_hold
    said = _said(memory, largest=memory.searched[-1], case="", ways=None)
    if shape is not None:
        ways = ["recompute them (--checkpointing full)"] * (shape.checkpointing.value != "full")
        ways += ["give a smaller --batch"] * (shape.micro_batch > 1)
        said |= {
            "case": "full" if shape.checkpointing.value == "full" else "recompute",
            "more": "selective or full" if shape.checkpointing.value == "none" else "full",
            "shorter": shape.micro_batch > 1,
            "ways": joined(ways, "or") or None,
            "gb": shape.total_gb,
        }
    if would is not None:
        s, n, _ = would  # past a node only whole nodes are searched
        said |= {"case": "would", "name": strategy_name(s), "n": n, **_cap(capped, n)}
    return sentence("nothing_fits", **said)


def _cap(capped: Iterable[str | Finding], devices: int) -> dict[str, Value]:
    """What caps the count below ``devices``, so that the remedy named lifts it: the
    topology's GPUs (past them only whole nodes of that many), else the most devices
    allowed (more spill onto whole nodes). A CPU host's cores cap no count here: a CPU
    has no memory check."""
    cap = next((f for f in capped if isinstance(f, Finding) and f.kind in CAPS), None)
    if cap is None:
        return {"cap": "devices"}
    gpus = 1 if cap.kind is K.ONE_GPU else int(cap["gpus"])
    return {"cap": "topology", "gpus": gpus, "whole": -(-devices // gpus) * gpus}


def _spread(c: MeasuredCount) -> str:
    """``0.199`` (one run) or ``median 0.2 (spread 0.18-0.22)``, of the trusted runs."""
    if c.measured_low is None or c.measured_high is None:
        return number(c.measured_speedup)
    ends = f"{number(c.measured_low)}-{number(c.measured_high)}"
    return f"median {number(c.measured_speedup)} (spread {ends})"


def _span(low: float, high: float) -> str | None:
    """The interval's width as a ratio where it is too wide to test (None where not)."""
    if low > 0 and high / low <= TOO_WIDE_TO_TEST:
        return None
    if low <= 0:
        return "infinity"
    return number(high / low)


def measured_said(c: MeasuredCount) -> str:
    """The runs at ``c`` against the prediction, inside or outside its interval; inside an
    interval too wide to test it (as ``report.bench_checks`` says), no agreement."""
    remedy = next((m.weak_remedy for m in c.trusted if m.weak_remedy), "")  # what firms them
    left = c.of(c.left_out)
    case = "outside"
    if not c.trusted:
        case = "flagged"
    elif c.inside:
        case = "inside"
    elif remedy:
        case = "weak"
    return sentence(
        "measured_count",
        c=c,
        case=case,
        runs=c.speedups,
        count=len(c.used),
        where="inside" if c.inside else "outside",
        spread=_spread(c) if c.trusted else "",
        batch=c.batch_per_device if c.weak_scaling else None,
        span=_span(c.predicted_low, c.predicted_high),
        within=TOO_WIDE_TO_TEST,
        remedy=remedy,
        allowed=c.why == TRUSTED_ALLOWED,
        left=len(left) or None,
        left_runs=tuple(left),
    )


def against_measured(
    counts: Sequence[MeasuredCount], disagreeing: tuple[MeasuredCount, ...] = ()
) -> list[str]:
    """A sentence for each of ``counts`` but those ``disagreeing`` (said as disagreements)."""
    apart = {(d.accelerators, d.batch_per_device, d.accum) for d in disagreeing}
    return [
        measured_said(c)
        for c in counts
        if (c.accelerators, c.batch_per_device, c.accum) not in apart
    ]


def disagreement(d: MeasuredCount) -> str:
    """The disagreement in words, first among the caveats and the answer's lines."""
    left = d.of(d.left_out)
    return sentence(
        "disagreement",
        d=d,
        low=d.measured_low,
        runs=len(d.used),
        flags="; ".join(d.flags),
        allowed=d.why == TRUSTED_ALLOWED,
        left=len(left) or None,
        left_runs=tuple(left),
        weak=(d.weak_scaling and d.batch_per_device) or None,
    )
