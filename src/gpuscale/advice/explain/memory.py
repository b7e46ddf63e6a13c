"""The memory check in words: from which count the strategy asked (or the one advised)
holds the model, what it holds a device and why no count searched holds it
(:func:`nothing_fits`, also the refusal ``api`` raises)."""

from __future__ import annotations

from collections.abc import Iterable

from gpuscale.advice.explain.phrasebook import sentence, strategy_name
from gpuscale.advice.types import Finding, Value
from gpuscale.advice.types import FindingKind as K
from gpuscale.hardware.memory import GATHERED, GATHERED_UNITS, MemoryCheck
from gpuscale.quantities import filled, format_count, with_article


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
    others = [
        f"{strategy_name(s)} from {n}"
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
        # a count capped at the topology's GPUs (``calibrate.link.device_cap``)
        caps = (K.ONE_GPU, K.TOPOLOGY_CAP)
        cap = next((f for f in capped if isinstance(f, Finding) and f.kind in caps), None)
        if cap is not None:
            gpus = 1 if cap.kind is K.ONE_GPU else int(cap["gpus"])
            said |= {"cap": "topology", "gpus": gpus, "whole": memory.whole_nodes(gpus)}
    return _said(memory, "nothing_fits", **said)
