"""Which count the advice details, said wherever it is named, and what would change it.

The step's parts, what caps the speedup and what would change it are read at one count,
the decision's ``focus`` (``advice/search/decision.py``): the next count above the one advised,
where the next step would go (the one advised where none is larger). It is neither the
advised nor the fastest count wherever the advised one is below the next count and the
fastest above it ("Use 2 devices", the fastest at 8, the step detailed at 4), so every
sentence naming it says what it is
(``named``), and the step's sentence names the fastest count too where it differs
(``detailed``). What the focus row rests on (the predictions' ``rests_on``: ``predicted``,
or ``measured`` where runs there fell outside the interval) is said with the deciding term
(``focus_words``); from weak runs (too few steps) no change is named (``changes``).

Counts: Which device counts the search tried, by what rule, and why a count allowed has no row.

The rule (``AdviceInputs.device_counts``): the powers of two below the most allowed, and
the most allowed itself; where the counts span nodes, above one node only whole nodes
(multiples of the devices per node). A count searched has no row where the global batch
kept (strong scaling) does not split into whole per-device batches over it (64 samples
over 3 devices), within the accumulation allowed and the largest batch that fits. A
walk's ``--max-devices 3`` showed N = 1 and 2 and dropped 3 without a word; a later one's
``--max-devices 12 --global-batch 384`` searched 1, 2, 4 and 8 without saying so, and
``--max-devices 3`` at a batch 3 does not divide said "2 devices is the most allowed".
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pandas as pd

from gpuscale.advice.explain.phrasebook import PHRASES, remedies
from gpuscale.advice.explain.table_words import fixed_parts, optimizer_at, optimizer_ms
from gpuscale.advice.explain.view import AdviceView
from gpuscale.advice.inputs import AdviceInputs
from gpuscale.advice.types import STOPPED, Decision, TermId
from gpuscale.bench.support import weak
from gpuscale.quantities import agreeing, counted, format_ms, joined


def named(d: Decision) -> str:
    """The focus count and what it is: ``4 devices, the next count above the 2 advised``
    or ``the 8 devices advised``."""
    word = "advised" if d.count is not None else "predicted as assumed"  # a count withheld
    if d.focus == d.accelerators:
        return f"the {counted(d.focus, 'device')} {word}"
    advised = f"the 1 device {word}" if d.accelerators == 1 else f"the {d.accelerators} {word}"
    return f"{d.focus} devices, the next count above {advised}"


# What a row's step rests on (the predictions' ``rests_on``), as the step says it.
RESTS_ON = {
    "measured": "measured: the runs at that count, outside the predicted interval",
    "measured_below": "the model's, times the miss measured at a count below",
}


def term_name(term: str) -> str:
    """``the latency term``; the remainder a measured step leaves unexplained by name."""
    if term == TermId.UNEXPLAINED:
        return "the remainder unexplained by the model"
    return f"the {term} term"


def largest(term: str) -> str:
    """``latency``; the remainder a measured step leaves unexplained by name."""
    return term_name(term) if term == TermId.UNEXPLAINED else term


def focus_words(d: Decision, ms: Callable[[float], str]) -> tuple[str, str, str]:
    """At the decision's focus: the deciding term's name as a sentence starts it, what the
    step rests on (`` (measured: ...)``, "" where predicted) and the remainder the model's
    terms leave of a measured step (``, unexplained by the model 124 ms (...)``)."""
    name = term_name(d.dominant_term)
    if d.focus_rests_on == "predicted":
        return name[0].upper() + name[1:], "", ""
    left = d.overheads_ms.get(TermId.UNEXPLAINED, 0.0)
    return (
        name[0].upper() + name[1:],
        f" ({RESTS_ON[d.focus_rests_on]})",
        f", unexplained by the model {ms(left)} (the step less the model's terms, "
        f"{ms(d.focus_step_ms - left)})",
    )


def deciding_kind(advice: AdviceView) -> str:
    """What decides the answer, one kind for every view (the answer's ``Decides:`` line and
    the step's sentence under ``--explain``): ``measured`` (runs at or below the focus the
    model misses), ``withheld`` (an assumed term's range moves the count), ``interval`` (a
    count held back by an 80% interval reaching no gain), the cap ``convergence`` or why
    the search stopped (``STOPPED``), else ``term`` (the focus's largest overhead)."""
    d = advice.decision
    if any(m.accelerators <= d.focus for m in getattr(advice, "disagreements", ())):
        return "measured"
    if d.withheld_by:
        return "withheld"
    if d.held_back is not None and (d.held_back_low or 2) <= 1:
        return "interval"
    return d.cap if d.cap in ("convergence", *STOPPED) else "term"


def detailed(d: Decision) -> str:
    """``named`` with the fastest count where it is another (the step's sentence)."""
    said = named(d)
    if d.fastest == d.focus:
        return f"{said} and the fastest"
    if d.fastest == d.accelerators:
        return f"{said}, itself the fastest" if d.focus == d.accelerators else f"{said} and fastest"
    return f"{said} (the fastest is {d.fastest})"


# The fixed per-step costs as the largest overhead (under DDP; FSDP's ranks step only their
# shards, so only each forward and backward's is whole), and what helps
FIXED_WHOLE = PHRASES["fixed_whole"]
FIXED_WHOLE_FSDP = PHRASES["fixed_whole_fsdp"]
FIXED_HELPS = PHRASES["fixed_helps"]
REMEDIES = remedies("full")  # what would help most, as --explain says it


def remedy(advice: AdviceView) -> str:
    """What would help most for the decision's ``change``; for latency, only the cures
    that apply: no larger buckets where the gradients already fit in one, and more
    accumulation where the advice already accumulates (a model of one 77 kB bucket with
    accumulation 8 is offered neither); and where the largest
    overhead gone would still miss the target, the next one that must shrink too."""
    d, inputs = advice.decision, advice.inputs
    said = REMEDIES[d.change]
    if d.change in STOPPED:  # below the most allowed: what would predict a larger count
        said = larger_counts(inputs, advice.predictions, d.focus) or said
    if d.change == TermId.LATENCY and inputs is not None:
        cures = ["larger DDP buckets (fewer messages)"]
        cures = cures if inputs.model.grad_bytes > inputs.bucket_mb * 2**20 else []
        cures.append("a larger batch per device")
        cures.append(
            "gradient accumulation (one all-reduce per k micro-steps)"
            if d.accum == 1
            else f"more than the {d.accum} accumulation steps chosen"
        )
        said = f"{joined(cures, 'or')} would help most; a faster link "
        said += "would barely matter"
    if d.change == TermId.FIXED and inputs is not None:
        whole = FIXED_WHOLE_FSDP if inputs.strategy == "fsdp" else FIXED_WHOLE
        parts = fixed_parts(inputs, advice.predictions, d.focus)
        fused = parts["optimizer"] > parts["forward_backward"]  # the optimizer step, mostly
        said = f"{whole}; {'a fused optimizer (fused=True), ' if fused else ''}{FIXED_HELPS}"
    if d.short_alone() and not d.also_shrink:
        said += f"; not enough: with every overhead gone {named(d)} would still miss it"
    elif d.short_alone():
        also = [f"{k} ({format_ms(d.overheads_ms[k])})" for k in d.also_shrink]
        said += f"; alone not enough: the {joined(also)} term{'s' if len(also) > 1 else ''} "
        said += "must shrink too"
    return said


def changes(advice: AdviceView, remedy: str) -> str:
    """What would change the decision: ``remedy`` (``advice.focus.remedy``), or where the
    runs advised on are weak, that they cannot say (measure first)."""
    inputs = advice.inputs
    found = getattr(inputs, "evidence", None)
    if not weak(found) and not (found is not None and found.all_flagged):
        return remedy
    return (
        f"not said from these runs: the terms above are read from {found.rests_on()}, "
        "a measurement to repeat, not a cause to act on (see Measure first)"
    )


def marked(advice: AdviceView) -> str:
    """`` (from weak runs: a measurement to repeat)`` after a finding on the step's terms
    where the runs advised on are weak, else ``""``."""
    return " (from weak runs: a measurement to repeat)" if weak(advice.inputs.evidence) else ""


def not_spread(inputs: AdviceInputs, frame: pd.DataFrame, n: int, like: float) -> str:
    """What of the compute at ``n`` devices is above its share of one device's, in the
    parts the fixed cost line names (``(of it 1.1 ms fixed per-step costs not spread ...:
    1.1 ms of the optimizer step ...)``)."""
    parts = fixed_parts(inputs, frame, n)
    excess = parts["optimizer"] + parts["forward_backward"]
    ms = partial(format_ms, like=like)
    if optimizer_ms(inputs) <= 0:
        return (
            f"(of it {ms(excess)} fixed per-step cost not spread over the devices' smaller batches)"
        )
    said = []
    if parts["optimizer"] > 0:
        each = (
            f"{ms(optimizer_at(inputs, n))} on each device, its shard's 1/{n} of one "
            f"device's {ms(optimizer_ms(inputs))}"
            if inputs.strategy == "fsdp"
            else f"{ms(optimizer_ms(inputs))} on every device"
        )
        said.append(f"{ms(parts['optimizer'])} of the optimizer step ({each}, once per step)")
    if parts["forward_backward"] > 0:
        said.append(f"{ms(parts['forward_backward'])} of the forward and backward's fixed cost")
    what = f": {joined(said)}" if said else ""
    spread = "fixed per-step costs not spread over the devices' smaller batches"
    return f"(of it {ms(excess)} {spread}{what})"


def _names(counts: list[int]) -> str:
    """``1, 2, 4`` with runs of three or more consecutive counts as ``5-7``."""
    parts: list[str] = []
    i = 0
    while i < len(counts):
        j = i
        while j + 1 < len(counts) and counts[j + 1] == counts[j] + 1:
            j += 1
        if j - i >= 2:
            parts.append(f"{counts[i]}-{counts[j]}")
        else:
            parts.extend(str(c) for c in counts[i : j + 1])
        i = j + 1
    return ", ".join(parts)


def _per_node(inputs: AdviceInputs) -> int | None:
    """The devices per node where the counts span nodes (None on one node)."""
    network = inputs.network
    return network.per_node if network.inter is not None and network.per_node else None


def _off_nodes(inputs: AdviceInputs) -> list[int]:
    """The counts the powers-of-two rule gives that are not whole nodes (left out)."""
    per_node = _per_node(inputs)
    if per_node is None:
        return []
    searched, most = set(inputs.device_counts), int(inputs.max_devices)
    proposed = [2**k for k in range(64) if 2**k < most]
    return [n for n in [*proposed, most] if n not in searched]


def counts_rule(inputs: AdviceInputs, short: bool = False) -> str:
    """The rule the counts searched follow, in words (``short``: in a clause)."""
    most = int(inputs.max_devices)
    per_node, off = _per_node(inputs), _off_nodes(inputs)
    if short:
        nodes = f", whole nodes of {per_node} past one" if per_node and off else ""
        return f"powers of two and {most} only{nodes}"
    rule = (
        f"the powers of two up to {most}, the most allowed"
        if most & (most - 1) == 0
        else f"the powers of two below {most}, the most allowed, and {most} itself"
    )
    if per_node and off:
        rule += (
            f"; past one node of {per_node} devices only whole nodes (multiples of "
            f"{per_node}), so not {_names(off)}"
        )
    return rule


def _unsplit(inputs: AdviceInputs, missing: list[int]) -> str:
    """Why the counts ``missing`` (searched) have no row."""
    kept = inputs.kept_global_batch
    if kept is None:
        return "no per-device batch and accumulation fits"
    return (
        f"the global batch {kept} kept at every count does not split over "
        f"{'it' if len(missing) == 1 else 'them'} into whole per-device batches of at "
        f"most {inputs.largest_batch} with at most {inputs.max_accum} accumulation steps "
        f"(give a --global-batch divisible by {', '.join(map(str, missing))}, or "
        "--scaling weak)"
    )


def missing_counts(inputs: AdviceInputs, frame: pd.DataFrame) -> list[int]:
    """The counts searched that have no row in ``frame`` (the predictions)."""
    shown = set(frame["accelerators"].astype(int))
    return [int(n) for n in inputs.device_counts if n not in shown]


def dropped_short(inputs: AdviceInputs, frame: pd.DataFrame) -> str:
    """The default view's line on the counts searched that have no row, and why; "" when
    every count searched has its row (``dropped_counts``: the whole sentence)."""
    missing = missing_counts(inputs, frame)
    if not missing:
        return ""
    kept, why = inputs.kept_global_batch, "no per-device batch and accumulation fits"
    if kept is not None:
        why = (
            f"the global batch {kept} does not split over {agreeing(len(missing), 'it', 'them')} "
            "(--scaling weak keeps each device's batch)"
        )
    return f"Also searched, not shown: {joined(missing)} devices: {why}."


def dropped_counts(inputs: AdviceInputs, frame: pd.DataFrame) -> str:
    """A sentence naming the counts searched, where they are not every count up to the
    most allowed by what rule, and each one without a row and why; "" when every count
    from 1 to the most allowed was searched and has its row."""
    searched = inputs.device_counts
    missing = missing_counts(inputs, frame)
    every = inputs.device_counts == list(range(1, int(inputs.max_devices) + 1))
    if not missing and every:
        return ""
    said = f"Device counts searched: {', '.join(str(int(n)) for n in searched)}"
    if missing:
        said += f"; {', '.join(map(str, missing))} not shown: {_unsplit(inputs, missing)}"
    said += "."
    if not every:
        said += f" The counts searched are {counts_rule(inputs)}."
    return said


def above_largest(inputs: AdviceInputs, frame: pd.DataFrame, largest: int) -> tuple[str, str]:
    """Where ``largest``, the largest count predicted (and trusted), is below the most
    allowed: why no count between them was predicted, and what would let one be; ("",
    "") where ``largest`` is the most allowed."""
    if inputs is None or largest >= inputs.max_devices:
        return "", ""
    most = int(inputs.max_devices)
    searched = inputs.device_counts
    shown = frame[frame["accelerators"] > largest]
    rows = set(shown["accelerators"].astype(int))
    flagged = sorted(int(n) for n in shown[shown["flags"] != ""]["accelerators"])
    missing = [n for n in searched if largest < n <= most and n not in rows]
    unsearched = [n for n in range(largest + 1, most + 1) if n not in searched]
    why, fix = [], []
    if unsearched:
        why.append(
            f"{_names(unsearched)} {'is' if len(unsearched) == 1 else 'are'} not searched "
            f"({counts_rule(inputs, short=True)})"
        )
    off = [n for n in _off_nodes(inputs) if n > largest]
    per_node = _per_node(inputs)
    if off and per_node:
        fix.append(f"--max-devices {(most // per_node + 1) * per_node} (whole nodes)")
    if missing:
        kept = inputs.kept_global_batch
        does = "does" if len(missing) == 1 else "do"
        why.append(
            f"{', '.join(map(str, missing))} {does} not split the global batch {kept} kept "
            "at every count into whole per-device batches"
            if kept is not None
            else f"no per-device batch and accumulation fits {', '.join(map(str, missing))}"
        )
        if kept is not None:
            fix.append(f"a --global-batch divisible by {', '.join(map(str, missing))}")
            fix.append("--scaling weak")
    if flagged:
        why.append(f"{', '.join(map(str, flagged))} failed a plausibility check (left out)")
    return "; ".join(why), joined(fix, "or")


def below_the_most(inputs: AdviceInputs, frame: pd.DataFrame, largest: int, numbers: str) -> str:
    """The cap sentence where the largest count predicted, still paying, is below the most
    allowed ("" where it is the most allowed: the count allowed caps the speedup)."""
    why, _ = above_largest(inputs, frame, largest)
    if not why:
        return ""
    return (
        f"{largest} devices is the largest count predicted and still pays ({numbers}), "
        f"though {int(inputs.max_devices)} are allowed: {why}; the counts predicted cap "
        "the speedup."
    )


def larger_counts(inputs: AdviceInputs, frame: pd.DataFrame, largest: int) -> str:
    """What would predict a count above ``largest`` where more are allowed ("" where
    ``largest`` is the most allowed: allowing more is the remedy)."""
    why, fix = above_largest(inputs, frame, largest)
    if not why:
        return ""
    if fix:
        return f"more devices may pay off: {fix} would predict a count above {largest}"
    return f"more devices may pay off, but no count above {largest} was predicted"


def only_one(inputs: AdviceInputs, cap: str = "devices") -> str:
    """Why one device is all the table holds, from the decision's ``cap``: the devices
    there are, a global batch kept at every count that does not split over two (it said
    "only one device is available" beside "device count capped at 2"), or flagged rows."""
    kept = inputs.kept_global_batch if inputs is not None else None
    if cap == "flagged":
        return "Only one device's prediction passes the plausibility checks (see above)."
    if cap != "batch" or kept is None:
        return "Only one device is available: there is nothing to compare."
    return (
        f"Only one device can train at the global batch {kept:,} kept at every count (strong "
        "scaling): it does not split into whole per-device batches over more devices; "
        "--scaling weak, or a --global-batch that more devices divide, compares counts."
    )
