"""Which device counts the search tried, by what rule, and why a count allowed has no row.

The rule (``AdviceInputs.device_counts``): the powers of two below the most allowed, and
the most allowed itself; where the counts span nodes, above one node only whole nodes
(multiples of the devices per node). A count searched has no row where the global batch
kept (strong scaling) does not split into whole per-device batches over it (64 samples
over 3 devices), within the accumulation allowed and the largest batch that fits; each
is said.
"""

from __future__ import annotations

import pandas as pd

from gpuscale.advice.inputs import AdviceInputs
from gpuscale.quantities import agreeing, filled, joined


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
        nodes = filled(", whole nodes of {} past one", off and per_node)
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
        f"{agreeing(len(missing), 'it', 'them')} into whole per-device batches of at "
        f"most {inputs.largest_batch} with at most {inputs.max_accum} accumulation steps "
        f"(give a --global-batch divisible by {', '.join(map(str, missing))}, or "
        "--scaling weak)"
    )


def missing_counts(inputs: AdviceInputs, frame: pd.DataFrame) -> list[int]:
    """The counts searched that have no row in ``frame`` (the predictions)."""
    shown = set(frame["accelerators"].astype(int))
    return [int(n) for n in inputs.device_counts if n not in shown]


def dropped_short(inputs: AdviceInputs, frame: pd.DataFrame) -> str:
    """The default view's line on the counts searched that have no row, and why
    (``dropped_counts``: the whole sentence)."""
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
    """The counts searched, by what rule, and each one without a row and why; "" when
    every count from 1 to the most allowed was searched and has its row."""
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
            f"{_names(unsearched)} {agreeing(len(unsearched), 'is', 'are')} not searched "
            f"({counts_rule(inputs, short=True)})"
        )
    off = [n for n in _off_nodes(inputs) if n > largest]
    per_node = _per_node(inputs)
    if off and per_node:
        fix.append(f"--max-devices {(most // per_node + 1) * per_node} (whole nodes)")
    if missing:
        kept = inputs.kept_global_batch
        does = agreeing(len(missing), "does", "do")
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
    there are, a global batch kept at every count that does not split over two, or
    flagged rows."""
    kept = getattr(inputs, "kept_global_batch", None)
    if cap == "flagged":
        return "Only one device's prediction passes the plausibility checks (see above)."
    if cap != "batch" or kept is None:
        return "Only one device is available: there is nothing to compare."
    return (
        f"Only one device can train at the global batch {kept:,} kept at every count (strong "
        "scaling): it does not split into whole per-device batches over more devices; "
        "--scaling weak, or a --global-batch that more devices divide, compares counts."
    )
