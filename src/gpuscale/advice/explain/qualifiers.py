"""What qualifies the numbers, said before them: where memory limits the counts of the
strategy asked (``advice.memory.MemoryCheck``; a model one device holds says nothing),
and each count the bench measured in a configuration the advice predicts against its
prediction (``measured_runs.MeasuredCount``), those outside the interval
(``Disagreement``) first."""

from __future__ import annotations

from collections.abc import Sequence

from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.measured_runs import TRUSTED_ALLOWED, Disagreement, MeasuredCount
from gpuscale.advice.memory import MemoryCheck
from gpuscale.hardware.memory import GATHERED, GATHERED_UNITS
from gpuscale.hardware.transformer import Activations
from gpuscale.quantities import counted, filled, format_count, joined, number, with_article
from gpuscale.tables.advice import TOO_WIDE_TO_TEST

NAMES = {"ddp": "DDP", "zero2": "ZeRO-2", "fsdp": "FSDP", "hybrid": "hybrid sharding"}
PRECISION_WORDS = {"mixed": "mixed precision", "fp32": "fp32"}
RECOMPUTED = {  # ``hardware.transformer.Checkpointing``
    "none": "nothing recomputed",
    "selective": "attention scores not stored",
    "full": "every layer recomputed",
}
OPTIMIZER_WORDS = {"adam": "Adam", "lamb": "LAMB", "sgd_momentum": "SGD with momentum"}


def _held(memory: MemoryCheck) -> str:
    """``16 bytes a parameter: Adam, mixed precision; activations not counted``."""
    optimizer = OPTIMIZER_WORDS.get(
        memory.state.optimizer, memory.state.optimizer.replace("_", " ")
    )
    how = "as the bench measured them"
    if (shape := memory.activations_counted) is not None:  # by numbers, from a shape
        how = f"from the layer shape, {RECOMPUTED[shape.checkpointing.value]}"
        if memory.activations_by_count:  # more devices split the global batch finer
            least = memory.activations_by_count[-1][1]
            how = (
                f"from the layer shape at {counted(shape.micro_batch, 'sequence')} a device, "
                f"{number(least.total_gb)} GB at {least.micro_batch}; "
                f"{RECOMPUTED[shape.checkpointing.value]}"
            )
    counted_too = (
        f"activations {number(memory.activations_gb)} GB {how}"
        if memory.activations_gb is not None
        else "activations not counted"
    )
    gathered = ""
    fallback = memory.fallback[0] if memory.fallback is not None else memory.strategy
    said_of = {memory.strategy, fallback} & set(GATHERED)  # the strategies the sentence names
    if memory.gathered_gb is not None and said_of:  # a shape's units, whole while computed
        gathered = (
            f"; FSDP's {GATHERED_UNITS} layers gathered whole {number(memory.gathered_gb)} GB"
        )
    return (
        f"{number(memory.state.bytes_per_param)} bytes a parameter: {optimizer}, "
        f"{PRECISION_WORDS[memory.state.precision]}; {counted_too}{gathered}"
    )


def _device(memory: MemoryCheck) -> str:
    """``the H100 SXM5 80GB (85.9 GB, 80 GiB as catalogued)``, and why it is assumed where
    it was not named: in GB, as every size the sentence compares with it."""
    assumed = filled("; assumed: {}", memory.device.assumed)
    return f"the {memory.device.memory.family} ({memory.device.memory.said()}{assumed})"


def _least(memory: MemoryCheck, strategy: str) -> str:
    """The least a device holds under ``strategy`` at a count searched: ``112 GB a device``
    where every count holds the same (DDP), else with the count it is least at (``30 GB a
    device at best, on 8 devices``): one device's whole state is not what a sharded strategy
    misses by."""
    least, everywhere = memory.least(strategy)
    if everywhere:
        return f"{number(least.total_gb)} GB a device"
    return f"{number(least.total_gb)} GB a device at best, on {counted(least.devices, 'device')}"


def memory_said(memory: MemoryCheck | None, advised: str, count: int) -> str:
    """The sentence said first where memory limits the counts (``""`` where it does not):
    the strategy asked holds the model from a count on, or not at all and the advice is
    of the strategy ``advised`` (``MemoryCheck.fallback``); where the ``count`` decided is
    below the fewest that hold it (no count predicted holds it), from which count it does
    (the answer's next line says why that count has no row and how to give it one)."""
    if memory is None or not memory.limits:
        return ""
    name = f"{with_article(format_count(memory.state.params))}-parameter model"
    fewest = memory.fits_from(advised)
    if fewest is not None and count < fewest:  # the answer says why that count has no row
        return (
            f"Memory: {NAMES[advised]} holds {name} on {_device(memory)} from "
            f"{counted(fewest, 'device')} ({_held(memory)})."
        )
    asked = memory.strategy
    least = _least(memory, asked)
    fits = memory.fits_from(asked)
    if fits is not None:
        return (
            f"Memory: {NAMES[asked]} holds {name} on {_device(memory)} from "
            f"{counted(fits, 'device')} ({number(memory.at(asked, fits).total_gb)} GB each; "
            f"{_held(memory)}); fewer are not advised."
        )
    fallback = memory.fallback
    if fallback is None:
        return nothing_fits(memory)
    strategy, devices = fallback
    others = [
        f"{NAMES[s]} from {n}"
        for s, n in memory.fewest
        if s not in (asked, strategy) and n is not None and s != "hybrid"
    ]
    also = filled("; {}", ", ".join(others))
    each = number(memory.at(strategy, devices).total_gb)
    return (
        f"Memory: {NAMES[asked]} cannot hold {name} on {_device(memory)}: {least} "
        f"({_held(memory)}). Advised with {NAMES[strategy]} (--strategy {strategy}), which "
        f"holds it from {counted(devices, 'device')} ({each} GB each){also}."
    )


def nothing_fits(memory: MemoryCheck) -> str:
    """Why no count searched holds the model under any strategy, and the fewest that
    would (a request to allow them)."""
    name = f"{with_article(format_count(memory.state.params))}-parameter model"
    would, fewest = memory.would_hold, ""
    if would is not None:
        s, n, nodes = would  # past a node only whole nodes are searched
        allow = f"--max-devices {n}" if nodes is None else f"--nodes {nodes}"
        fewest = f"; {NAMES[s]} holds it on {counted(n, 'device')} (allow them: {allow})"
        # the shape's activations, whole on every device, are the other way to fewer
        fewest += _less_activation(memory.activations_counted)
    elif (shape := memory.activations_counted) is not None and shape.checkpointing.value != "full":
        # a shape's activations are whole on every device: no count shards them
        more = "selective or full" if shape.checkpointing.value == "none" else "full"
        fewest = (
            "; the activations alone fill a device at any count: recompute them "
            f"(--checkpointing {more}){_shorter(shape.micro_batch)}"
        )
    elif shape is not None:  # every layer recomputed: only a shorter micro-batch is left
        fewest = (
            "; the activations alone fill a device at any count, every layer recomputed: "
            f"{_shorter(shape.micro_batch).removeprefix(' or ')}"
        )
    largest = memory.searched[-1]
    return (
        f"no count searched (up to {counted(largest, 'device')}) holds {name} on "
        f"{_device(memory)} under any strategy ({_held(memory)}){fewest}"
    )


def _less_activation(shape: Activations | None) -> str:
    """``; its activations take 81.7 GB a device: recompute them (--checkpointing full) or
    give a smaller --batch to leave more for the model state``, what is left of the two
    ("" without a shape, or with neither left)."""
    if shape is None:
        return ""
    ways = []
    if shape.checkpointing.value != "full":
        ways.append("recompute them (--checkpointing full)")
    if shape.micro_batch > 1:
        ways.append("give a smaller --batch")
    if not ways:
        return ""
    return (
        f"; its activations take {number(shape.total_gb)} GB a device: {joined(ways, 'or')} "
        "to leave more for the model state"
    )


def _shorter(micro_batch: int) -> str:
    """What else shrinks the activations: fewer sequences a device, or shorter ones where
    one is all a device takes."""
    if micro_batch > 1:
        return " or give a smaller --batch"
    return " or give a shorter --seq-len"


def _spread(c: MeasuredCount) -> str:
    """``0.199`` (one run) or ``median 0.2 (spread 0.18-0.22)``, of the trusted runs."""
    values = c.of(c.trusted)
    if len(values) == 1:
        return number(values[0])
    ends = f"{number(min(values))}-{number(max(values))}"
    return f"median {number(c.measured_speedup)} (spread {ends})"


def _case(c: MeasuredCount, remedy: str) -> str:
    """Which ``measured_count`` case says ``c``: all its runs flagged, inside the interval,
    outside it from weak runs (``remedy``: what firms them), or outside it."""
    if not c.trusted:
        return "flagged"
    if c.inside:
        return "inside"
    if remedy:
        return "weak"
    return "outside"


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
    low, high = c.predicted_low, c.predicted_high
    remedy = next((m.weak_remedy for m in c.trusted if m.weak_remedy), "")
    left = c.of(c.left_out) if c.trusted else []
    return sentence(
        "measured_count",
        case=_case(c, remedy),
        devices=c.accelerators,
        runs=tuple(c.of(c.runs)),
        count=len(c.trusted or c.runs),
        where="inside" if c.inside else "outside",
        spread=_spread(c) if c.trusted else "",
        point=c.predicted_speedup,
        low=low,
        high=high,
        batch=c.batch_per_device if c.weak_scaling else None,
        span=_span(low, high),
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
    seen, runs, predicted = d.measured, d.evidence, d.predicted
    several = len(runs.trusted_runs) > 1
    return sentence(
        "disagreement",
        n=d.accelerators,
        seen=seen.speedup,
        low=seen.speedup_low if several else None,
        high=seen.speedup_high,
        flagged=d.on_flagged_only,
        runs=len(runs.trusted_runs),
        flags="; ".join(runs.flags),
        allowed=runs.why == TRUSTED_ALLOWED,
        left=len(runs.left_out) or None,
        left_runs=tuple(runs.left_out),
        predicted=predicted.speedup,
        predicted_low=predicted.speedup_low,
        predicted_high=predicted.speedup_high,
        weak=(d.weak_scaling and d.batch_per_device) or None,
    )
