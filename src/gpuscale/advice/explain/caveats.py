"""What qualifies or refuses the headline: inputs not given, a step too noisy, what to
measure first, why a row is flagged and where its watts come from, each count measured
against its prediction; the bench runs' words (refusals, flagged and weak runs, the model
advised on, an FSDP run's own work); the memory check's (from which count a strategy holds
the model, and why no count searched holds it); an assumed term whose range moves the
advised count's speedup outside its interval (the time unsure)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Protocol

import pandas as pd

from gpuscale.advice.calibration import Power
from gpuscale.advice.derived import broken_left_out, broken_models, flags_among, flags_seen
from gpuscale.advice.explain.phrasebook import (
    WITHHELD,
    first_case,
    reading_value,
    said,
    sentence,
    withheld_words,
)
from gpuscale.advice.records import Assumption, Decision
from gpuscale.advice.remeasure import again, more_steps, rerun
from gpuscale.advice.types import (
    BenchRun,
    Finding,
    LeftOut,
    Measure,
    MeasuredCount,
    Refusal,
    RefusalKind,
    Value,
    maybe,
)
from gpuscale.advice.types import FindingKind as K
from gpuscale.bench.evidence import STEPS_FIX, ways
from gpuscale.bench.support import Support, weak
from gpuscale.hardware.memory import GATHERED, GATHERED_UNITS, MemoryCheck
from gpuscale.hardware.power import charged_at, whole_job_w
from gpuscale.names import did_you_mean
from gpuscale.plausibility import HOST_NOISE, FlagKind, remedies
from gpuscale.quantities import agreeing, filled, format_count, joined, numbers_apart, with_article
from gpuscale.tables.advice import ADVICE_COLUMNS, NOT_POSITIVE, TOO_WIDE_TO_TEST
from gpuscale.tables.requests import ref


def measure_first(found: Support | None, host_devices: int | None = None) -> str | None:
    if found is None or not (weak(found) or found.all_flagged):
        return None
    counts = found.counts or (1, 2)
    said: dict[str, Value] = {"model": found.model or "the model", "on": counts}
    if weak(found):  # runs of the steps asked in the file: not one more; else the command
        # holds the steps, the other fixes said as the bench says them
        other = ways([f for f in found.fixes if f != STEPS_FIX], found.steps_needed)
        said["case"] = "more" if more_steps(found) else "again"
        said["again"] = again(found, counts, host_devices) or ""
        said["command"] = rerun(found, counts, host_devices)
        said["beside"] = filled(", {}", joined(other))
    else:
        kinds = [k for k in found.flag_kinds if k != FlagKind.BASELINE]  # its N = 1 run's own
        said |= {"case": "flagged", "kinds": joined(kinds)}
        steps = found.kept_steps  # never fewer than the runs it replaces timed
        on = {"host_devices": host_devices, "per_node": found.per_node}  # where it runs
        run = BenchRun(found.model, counts, more=steps, run=found.run, **on)
        said["command"] = Measure(bench=run)
        said["how"] = "; ".join(remedies(kinds)) or None  # plausibility.REMEDIES
        said["other"] = joined([k for k in kinds if not remedies([k])])  # as their flags say
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
        flags.append(sentence("above_linear", speedup=speedup, bound=bound, row=row, first=first))
    return "; ".join(flags)


def flagged(table: pd.DataFrame, power: Power) -> pd.DataFrame:
    first = table.iloc[0]
    flags = [row_flags(r, first) for r in table.itertuples()]
    rows = zip(table["accelerators"].astype(int), table["batch_per_device"], strict=True)
    sources = [source_at(power, n, b) for n, b in rows]
    return table.assign(flags=flags, energy_source=sources)[list(ADVICE_COLUMNS)]


def source_at(power: Power, devices: int, batch: float | None = None) -> str:
    if (whole := whole_job_w(power.total_w_at, devices, batch)) is not None:
        return sentence("power_whole_job", n=devices, w=whole)
    if power.per_device(batch) is None:
        return "unknown"
    source = power.source
    if power.at_batch and batch is not None:  # per device, from the N = 1 runs' batches
        how, batches = charged_at(power.at_batch, batch)
        watts = [dict(power.at_batch)[b] for b in batches]
        at_w = power.per_device(batch)  # the watts charged: interpolated between two
        said = {"how": how, "batch": batch, "b": batches, "w": watts, "at_w": at_w}
        source = sentence("power_per_device", p=power, **said)
    # a count's devices said before the source, whose own words may end with an option
    return agreeing(devices, source, sentence("power_each", n=devices, source=source))


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


def flag_remedy(kinds: list[str]) -> str:
    """What clears flags of ``kinds``: each kind's remedy (``plausibility.REMEDIES``; one it
    does not know, as its flag says), or --allow-flagged; a broken model's fix alone."""
    # an N > 1 run's baseline flag is no cause of its own: its N = 1 run's kinds are
    kinds = [k for k in dict.fromkeys(kinds) if k != FlagKind.BASELINE]
    if FlagKind.LOSS in kinds:  # no way out but the fix: neither a quieter host nor --allow-flagged
        other = [k for k in kinds if k != FlagKind.LOSS]
        return sentence("broken", case="remedy", kinds=", ".join(other) or None)
    unknown = [k for k in kinds if not remedies([k])]
    if kinds:
        quieter = any(k in HOST_NOISE for k in kinds)  # said with --repeat, which that allows
        ways = {"ways": "; ".join(remedies(kinds)) or None, "other": ", ".join(unknown) or None}
        return sentence("flag_remedy", quieter=quieter, **ways)
    return ""


def _refused(found: Refusal) -> str:
    if found.kind == RefusalKind.BROKEN:
        several, models = len(found.broken) > 1, broken_models(found.broken)
        return sentence("broken", case="refused", r=found, several=several, models=models)
    names = found.names
    closest = found.kind == RefusalKind.NOT_IN_FILE and did_you_mean(found.model, list(names))
    said = {"error": found.error[:200], "closest": closest or "", "listed": joined(names) or "none"}
    said |= {"shown": ", ".join(names[:4]), "more": len(names[4:]) or None}
    return sentence("runs_refused", r=found, **said)


def refusal(found: Finding | Refusal | str, left: LeftOut | None = None) -> str:
    """A refusal, then the runs ``left`` out where one was an N = 1 run."""
    text = _refused(found) if isinstance(found, Refusal) else said(found)
    if not left:
        return text
    flagged = None
    if left.single:
        kinds = [kind for kind, _, _ in left.flags]
        runs = {"n": left.left, "flags": flags_seen(left.flags), "remedy": flag_remedy(kinds)}
        runs["outlasted"] = left.outlasted or None
        runs["several"] = flags_among(left.flags, left.left)
        flagged = sentence("flagged_runs", case="left", **runs)
    broken = maybe(said, broken_left_out(left.broken))
    return sentence("refusal", refused=text, flagged=flagged, broken=broken)


def field_refusal(field: str, value: object, found: Finding | Refusal | str) -> str:
    model = isinstance(found, Refusal) and found.kind == RefusalKind.NOT_IN_FILE
    return sentence("field_refusal", field=ref(field, value), refused=refusal(found), model=model)


def against_measured(
    counts: Sequence[MeasuredCount], disagreeing: tuple[MeasuredCount, ...] = ()
) -> list[str]:
    """The runs at each of ``counts`` but those ``disagreeing`` against the prediction."""
    apart = {(d.accelerators, d.batch_per_device, d.accum) for d in disagreeing}
    said = []
    for c in counts:
        if (c.accelerators, c.batch_per_device, c.accum) in apart:
            continue
        remedy = c.weak_evidence  # what firms them (where all are flagged: not said)
        cases = {"flagged": not c.trusted, "inside": c.inside, "weak": remedy, "outside": 1}
        values = {"case": first_case(cases), "within": TOO_WIDE_TO_TEST}
        said.append(sentence("measured_count", c=c, remedy=remedy, **values))
    return said


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
    held = sentence("memory_held", **said)
    return sentence(key, m=memory, model=model, device=on, held=held, **values)


def memory_said(memory: MemoryCheck | None, advised: str, count: int) -> str:
    """From which count the strategy asked, or the one ``advised``, holds the model."""
    if memory is None or not memory.limits:
        return ""
    asked, fewest = memory.strategy, memory.fits_from(advised)
    fits = memory.fits_from(asked)
    if fewest is not None and count < fewest:  # the answer says why that count has no row
        return _said(memory, "memory", case="from", advised=advised, n=fewest)
    if fits is not None:
        each = memory.at(asked, fits).total_gb
        return _said(memory, "memory", case="fits", n=fits, each=each)
    if memory.fallback is None:
        return nothing_fits(memory)
    least, everywhere = memory.least(asked)  # one device's whole state is not the miss
    others = [  # each strategy's fewest: a count searched, else one beyond them (said so)
        sentence("memory_other", s=s, n=n, searched=n == memory.fits_from(s))
        for s, n in memory.fewest
        if s not in (asked, *memory.fallback[:1]) and n is not None and s != "hybrid"
    ]
    said = {"least": least, "least_n": None if everywhere else least.devices}
    said["each"] = memory.at(*memory.fallback).total_gb
    return _said(memory, "memory", case="cannot", also=", ".join(others) or None, **said)


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
    if would is not None:  # past a node only whole nodes are searched
        said |= {"case": "would", "cap": "devices"}
        # a count capped at the topology's GPUs (``calibrate.link.span_of``)
        caps = (K.ONE_GPU, K.TOPOLOGY_CAP)
        cap = next((f for f in capped if isinstance(f, Finding) and f.kind in caps), None)
        if cap is not None:
            gpus = 1 if cap.kind is K.ONE_GPU else int(cap["gpus"])
            said |= {"cap": "topology", "gpus": gpus, "whole": memory.whole_nodes(gpus)}
    return _said(memory, "nothing_fits", **said)


def withholding(assumed: tuple[Assumption, ...], term: str) -> Assumption | None:
    """The assumption whose value ``term``'s range (a withholding term's) is around."""
    kind = WITHHELD.get(term, {}).get("term")
    return next((a for a in assumed if a.term == kind), None)


def time_unsure(d: Decision, assumed: tuple[Assumption, ...]) -> list[str]:
    """Each assumed term whose range moves the speedup of the count advised outside its 80%
    interval but not the count (``Reading.beyond_interval``): the speedup at each such end
    and what settles it. None where the count is withheld (its own line says the ends) or
    none holds the model."""
    if d.withheld_by or not d.holds:
        return []
    found = []
    for term in dict.fromkeys(r.term for r in d.readings if r.beyond_interval):
        ends = (r for r in d.readings if r.term == term and r.beyond_interval)
        at = "; ".join(sentence("reading_speedup", value=reading_value(r), r=r) for r in ends)
        said = {"row": WITHHELD[term], "c": d.read, "at": at}
        said["value"] = getattr(withholding(assumed, term), "value", None)
        found.append(sentence("time_unsure", settle=withheld_words(term, "settle"), **said))
    return found
