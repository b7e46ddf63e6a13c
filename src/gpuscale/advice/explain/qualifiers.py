"""What qualifies the numbers, said before them: where memory limits the counts
(``advice.memory.MemoryCheck``), and each count the bench measured against its prediction
(``measured_runs.MeasuredCount``), those outside the interval (``Disagreement``) first."""

from __future__ import annotations

from collections.abc import Sequence

from gpuscale.advice.explain.phrasebook import sentence, strategy_name
from gpuscale.advice.measured_runs import TRUSTED_ALLOWED, Disagreement, MeasuredCount
from gpuscale.advice.memory import MemoryCheck
from gpuscale.advice.types import Value
from gpuscale.hardware.memory import GATHERED, GATHERED_UNITS
from gpuscale.quantities import filled, format_count, joined, number, with_article
from gpuscale.tables.advice import TOO_WIDE_TO_TEST


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


def nothing_fits(memory: MemoryCheck) -> str:
    """Why no count searched holds the model under any strategy, and the fewest that
    would, or what else shrinks a shape's activations (whole on every device)."""
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
        s, n, nodes = would  # past a node only whole nodes are searched
        said |= {"case": "would", "name": strategy_name(s), "n": n, "nodes": nodes}
    return sentence("nothing_fits", **said)


def _spread(c: MeasuredCount) -> str:
    """``0.199`` (one run) or ``median 0.2 (spread 0.18-0.22)``, of the trusted runs."""
    values = c.of(c.trusted)
    if len(values) == 1:
        return number(values[0])
    ends = f"{number(min(values))}-{number(max(values))}"
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
    left = c.of(c.left_out) if c.trusted else []
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
        runs=tuple(c.of(c.runs)),
        count=len(c.trusted or c.runs),
        where="inside" if c.inside else "outside",
        spread=_spread(c) if c.trusted else "",
        batch=c.batch_per_device if c.weak_scaling else None,
        span=_span(c.predicted_low, c.predicted_high),
        within=TOO_WIDE_TO_TEST,
        remedy=remedy,
        allowed=any(m.allowed for m in c.trusted),
        left=len(left) or None,
        left_runs=tuple(left),
    )


def against_measured(
    counts: Sequence[MeasuredCount], disagreeing: tuple[Disagreement, ...] = ()
) -> list[str]:
    """A sentence for each of ``counts`` but those ``disagreeing`` (said as disagreements)."""
    apart = {(d.accelerators, d.batch_per_device, d.accum) for d in disagreeing}
    return [
        measured_said(c)
        for c in counts
        if (c.accelerators, c.batch_per_device, c.accum) not in apart
    ]


def disagreement(d: Disagreement) -> str:
    """The disagreement in words, first among the caveats and the answer's lines."""
    runs = d.evidence
    return sentence(
        "disagreement",
        d=d,
        low=d.measured.speedup_low if len(runs.trusted_runs) > 1 else None,
        runs=len(runs.trusted_runs),
        flags="; ".join(runs.flags),
        allowed=runs.why == TRUSTED_ALLOWED,
        left=len(runs.left_out) or None,
        left_runs=tuple(runs.left_out),
        weak=(d.weak_scaling and d.batch_per_device) or None,
    )
