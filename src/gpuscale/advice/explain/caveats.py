"""What qualifies the headline (inputs not given, a step too noisy, what to measure first,
memory); why a row is flagged; a calibration's words (:func:`worded`)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace
from typing import Protocol

import pandas as pd

from gpuscale.advice.calibration import Calibration, Power
from gpuscale.advice.explain.phrasebook import sentence, strategy_name
from gpuscale.advice.memory import MemoryCheck
from gpuscale.advice.records import Assumption, Decision
from gpuscale.advice.types import (
    Finding,
    Reading,
    TermId,
    Value,
    again,
    bench_run,
    more_steps,
    rerun,
)
from gpuscale.advice.types import FindingKind as K
from gpuscale.analysis.critical_batch import NoiseScale
from gpuscale.bench.evidence import FIRM_STEPS, STEPS_FIX, ways
from gpuscale.bench.support import Support, weak
from gpuscale.hardware.memory import GATHERED, GATHERED_UNITS
from gpuscale.hardware.power import charged_at, whole_job_w
from gpuscale.plausibility import HOST_NOISE, FlagKind
from gpuscale.quantities import agreeing, filled, format_count, joined, numbers_apart, with_article
from gpuscale.tables.advice import ADVICE_COLUMNS, NOT_POSITIVE
from gpuscale.tables.bench import on_a_larger_host


def headline(
    *,
    defaults: list[str],
    wide_step_log: float | None,
    devices: int,
    host_devices: int | None = None,
    steps: int = FIRM_STEPS,
    again: str = "",
) -> list[str]:
    lines = [sentence("provisional", rests="; ".join(defaults))] if defaults else []
    if wide_step_log is not None:  # ``Qualifiers.wide_step_log``
        host = on_a_larger_host(devices, host_devices)
        said = {"width": wide_step_log, "again": again, "devices": devices, "host": host}
        lines.append(sentence("not_firm", firm=steps, **said))
    return lines


# the assumption whose value each withholding term's range is around
_ASSUMED_AS = {"link": TermId.LINK, "fixed_cost": TermId.FIXED, "flops_per_sample": TermId.FLOPS}


def withholding(d: Decision, assumed: tuple[Assumption, ...]) -> Assumption | None:
    term = _ASSUMED_AS.get(str(d.withheld_by))
    return next((a for a in assumed if a.term == term), None)


def readings_apart(d: Decision, assumed: tuple[Assumption, ...]) -> list[Reading]:
    """The readings at the ends of the withholding term's range that differ from the value
    assumed (pcie-phb's 10 GB/s where pcie-phb is assumed is no alternative)."""
    found = withholding(d, assumed)
    at = None if found is None or found.quantity is None else found.quantity.value
    return [r for r in d.readings if r.term == d.withheld_by and r.value != at]


def measure_first(found: Support | None, host_devices: int | None = None) -> str | None:
    if found is None or not (weak(found) or found.all_flagged):
        return None
    counts = found.counts or (1, 2)
    said: dict[str, Value] = {"model": found.model or "the model", "on": counts}
    if weak(found):  # runs of the steps asked in the file: not one more; else the command
        # holds the steps, the other fixes said as the bench says them
        other = ways([f for f in found.fixes if f != STEPS_FIX], found.steps_needed)
        said["case"] = "more" if more_steps(found) else "again"
        said["again"] = again(found, counts, host_devices)
        said["command"] = rerun(found, counts, host_devices)
        said["beside"] = filled(", {}", joined(other))
    else:
        kinds = [k for k in found.flag_kinds if k != FlagKind.BASELINE]  # its N = 1 run's own
        said |= {"case": "flagged", "kinds": joined(kinds)}
        said["command"] = bench_run(found.model, counts, host_devices, run=found.run)
        said["how"] = any(k in HOST_NOISE for k in kinds)  # on a quieter machine
        said["other"] = joined([k for k in kinds if k not in HOST_NOISE])
    return sentence("measure_first", **said)


class RowFlags(Protocol):
    """A row of ``DataFrame.itertuples`` over the predictions."""

    not_positive: bool
    above_linear: float  # its speedup where above linear, else NaN
    linear_speedup: float  # linear where above it, else NaN
    accelerators: int


def row_flags(row: RowFlags, first: pd.Series) -> str:
    """Why a predicted row cannot be true (8.004 above 8 as printed, never 8 above 8)."""
    flags = [NOT_POSITIVE] * bool(row.not_positive)
    if not math.isnan(row.above_linear):
        speedup, bound = numbers_apart(row.above_linear, row.linear_speedup)
        n, first_n = row.accelerators, first["accelerators"]
        flags.append(sentence("above_linear", speedup=speedup, bound=bound, n=n, first=first_n))
    return "; ".join(flags)


def flagged(table: pd.DataFrame, power: Power) -> pd.DataFrame:
    first = table.iloc[0]
    flags = [row_flags(r, first) for r in table.itertuples()]
    rows = zip(table["accelerators"].astype(int), table["batch_per_device"], strict=True)
    sources = [source_at(power, n, b) for n, b in rows]
    return table.assign(flags=flags, energy_source=sources)[list(ADVICE_COLUMNS)]


def measured_noise(noise: NoiseScale) -> str:
    return sentence("b_simple_measured", n=noise, bounded=math.isfinite(noise.high))


def worded(cal: Calibration) -> Calibration:
    """``cal`` with the words of its power's source, of a convergence model from the bench's
    noise scale and of its memory check."""
    power = cal.machine.power
    if not power.source:
        cal = cal.at({"machine": {"power": replace(power, source=power_source(power))}})
    model, noise = cal.search.convergence, None if cal.bench is None else cal.bench.noise
    if model is not None and cal.search.noise_steps is not None and noise is not None:
        source = measured_noise(noise)
        assumed = tuple(
            replace(a, basis=source) if a.term is TermId.CONVERGENCE else a
            for a in cal.said.assumptions
        )
        model = replace(model, source=source)
        cal = cal.at({"search": {"convergence": model}, "said": {"assumptions": assumed}})
    memory, said = cal.machine.memory, cal.machine.memory_said
    if memory is None:
        return cal
    device = memory.device
    if said.device_assumed:
        device = replace(device, assumed=sentence("device_assumed"))
    source = sentence("memory_not_counted")
    shape = memory.activations_counted
    if said.peak_gb is not None:
        source = sentence("memory_rest", m=said)
    elif shape is not None:
        source = sentence("memory_shape", a=shape, checkpointing=shape.checkpointing.value)
    worded = replace(memory, device=device, activations_source=source)
    return replace(cal, machine=replace(cal.machine, memory=worded))


def power_source(power: Power) -> str:
    batches = None
    if power.measured and power.at_batch:
        batches = tuple(float(b) for b, _ in power.at_batch)
    said = {"kind": power.kind.value, "assumed": power.assumed or None, "batches": batches}
    return sentence("power_source", p=power, **said)


def source_at(power: Power, devices: int, batch: float | None = None) -> str:
    if whole_job_w(power.total_w_at, devices, batch) is not None:
        return sentence("power_whole_job", n=devices)
    if power.per_device(batch) is None:
        return "unknown"
    source = power.source
    if power.at_batch and batch is not None:  # per device, from the N = 1 runs' batches
        how, batches = charged_at(power.at_batch, batch)
        watts = [dict(power.at_batch)[b] for b in batches]
        source = sentence("power_per_device", p=power, how=how, batch=batch, b=batches, w=watts)
    return agreeing(devices, source, f"{source} x {devices}")


def power_said(power: Power, counts: Iterable[tuple[int, float | None]]) -> str:
    """The source, then how each of ``counts`` (N, per-device batch) is charged."""
    if not power.at_batch:
        return power.source
    groups: dict[tuple[str, tuple[float, ...]], list[tuple[int, float]]] = {}
    for n, b in counts:
        if b is None:
            continue
        whole = whole_job_w(power.total_w_at, n, b) is not None
        key = ("whole", ()) if whole else charged_at(power.at_batch, b)
        groups.setdefault(key, []).append((int(n), float(b)))
    parts = []
    for (how, batches), rows in groups.items():
        at = joined(f"{b:g}" for b in dict.fromkeys(b for _, b in rows))
        on = [n for n, _ in rows]  # the counts in order: 2, 4 and 8 devices
        # all smaller than the nearest measured: its power likely higher than theirs
        smaller = bool(batches) and all(b < batches[0] for _, b in rows)
        parts.append(
            sentence("power_charged", how=how, on=on, at=at, batches=batches, smaller=smaller)
        )
    return sentence("power_said", source=power.source, charged=filled("; {}", "; ".join(parts)))


def _said(memory: MemoryCheck, key: str, **values: Value) -> str:
    device, shape, by_count = memory.device, memory.activations_counted, memory.activations_by_count
    least = by_count[-1][1] if shape is not None and by_count else None
    fallback = memory.fallback[0] if memory.fallback is not None else memory.strategy
    gathered = {memory.strategy, fallback} & set(GATHERED)  # the strategies said
    said = {"m": memory, "least": least, "units": GATHERED_UNITS}
    said["optimizer"] = memory.state.optimizer.replace("_", " ")
    said["how"] = "bench" if shape is None else ("least" if least is not None else "shape")
    said["gathered"] = memory.gathered_gb if gathered else None
    model = f"{with_article(format_count(memory.params))}-parameter model"
    assumed = filled("; assumed: {}", device.assumed)
    on = f"the {device.memory.family} ({device.memory.said()}{assumed})"
    return sentence(key, model=model, device=on, held=sentence("memory_held", **said), **values)


def memory_said(memory: MemoryCheck | None, advised: str, count: int) -> str:
    """From which count the strategy asked, or the one ``advised``, holds the model."""
    if memory is None or not memory.limits:
        return ""
    asked, fewest = memory.strategy, memory.fits_from(advised)
    fits = memory.fits_from(asked)
    if fewest is not None and count < fewest:  # the answer says why that count has no row
        said: dict[str, Value] = {"case": "from", "name": strategy_name(advised), "n": fewest}
    elif fits is not None:
        each = memory.at(asked, fits).total_gb
        said = {"case": "fits", "name": strategy_name(asked), "n": fits, "each": each}
    elif memory.fallback is None:
        return nothing_fits(memory)
    else:
        strategy, devices = memory.fallback
        others = [
            f"{strategy_name(s)} from {n}"
            for s, n in memory.fewest
            if s not in (asked, strategy) and n is not None and s != "hybrid"
        ]
        least, everywhere = memory.least(asked)  # one device's whole state is not the miss
        said = {"case": "cannot", "name": strategy_name(strategy), "n": devices}
        said |= {"asked": strategy_name(asked), "least": least.total_gb, "strategy": strategy}
        said |= {
            "least_n": None if everywhere else least.devices,
            "also": ", ".join(others) or None,
        }
        said["each"] = memory.at(strategy, devices).total_gb
    return _said(memory, "memory", **said)


def nothing_fits(memory: MemoryCheck, capped: Iterable[str | Finding] = ()) -> str:
    """Why no count searched holds the model, and the fewest that would with what lifts the
    cap of those ``capped``, or what else shrinks a shape's activations."""
    shape, would = memory.activations_counted, memory.would_hold
    said: dict[str, Value] = {"largest": memory.searched[-1], "case": "", "ways": None}
    if shape is not None:
        full, shorter = shape.checkpointing.value == "full", shape.micro_batch > 1
        ways = " ".join(["recompute"] * (not full) + ["smaller"] * shorter) or None
        case = "full" if full else "recompute"
        said |= {"case": case, "shape": shape, "shorter": shorter, "ways": ways}
    if would is not None:
        s, n, _ = would  # past a node only whole nodes are searched
        said |= {"case": "would", "name": strategy_name(s), "n": n, "cap": "devices"}
        # a count capped at the topology's GPUs (``calibrate.link.device_cap``)
        caps = (K.ONE_GPU, K.TOPOLOGY_CAP)
        cap = next((f for f in capped if isinstance(f, Finding) and f.kind in caps), None)
        if cap is not None:
            gpus = 1 if cap.kind is K.ONE_GPU else int(cap["gpus"])
            said |= {"cap": "topology", "gpus": gpus, "whole": memory.whole_nodes(gpus)}
    return _said(memory, "nothing_fits", **said)
