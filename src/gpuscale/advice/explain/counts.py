"""Which device counts the search tried (``Calibration.device_counts``: powers of two up to
the most allowed, past one node whole nodes), and why a count searched has no row."""

from __future__ import annotations

import pandas as pd

from gpuscale.advice.calibration import Calibration
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


def _per_node(cal: Calibration) -> int | None:
    network = cal.machine.network
    return network.per_node if network.inter is not None and network.per_node else None


def _off_nodes(cal: Calibration) -> list[int]:
    """The counts the powers-of-two rule gives that are not whole nodes."""
    per_node = _per_node(cal)
    if per_node is None:
        return []
    searched, most = set(cal.machine.device_counts), int(cal.machine.max_devices)
    proposed = [2**k for k in range(64) if 2**k < most]
    return [n for n in [*proposed, most] if n not in searched]


def counts_rule(cal: Calibration, short: bool = False) -> str:
    """The rule the counts searched follow, in words (``short``: in a clause)."""
    most = int(cal.machine.max_devices)
    per_node, off = _per_node(cal), _off_nodes(cal)
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


def _unsplit(cal: Calibration, missing: list[int]) -> str:
    kept = cal.run.kept_global_batch
    if kept is None:
        return "no per-device batch and accumulation fits"
    return (
        f"the global batch {kept} kept at every count does not split over "
        f"{agreeing(len(missing), 'it', 'them')} into whole per-device batches of at "
        f"most {cal.run.largest_batch} with at most {cal.run.max_accum} accumulation steps "
        f"(give a --global-batch divisible by {', '.join(map(str, missing))}, or "
        "--scaling weak)"
    )


def missing_counts(cal: Calibration, frame: pd.DataFrame) -> list[int]:
    shown = set(frame["accelerators"].astype(int))
    return [int(n) for n in cal.machine.device_counts if n not in shown]


def dropped_short(cal: Calibration, frame: pd.DataFrame) -> str:
    """The default view's line on the counts searched that have no row."""
    missing = missing_counts(cal, frame)
    if not missing:
        return ""
    kept, why = cal.run.kept_global_batch, "no per-device batch and accumulation fits"
    if kept is not None:
        why = (
            f"the global batch {kept} does not split over {agreeing(len(missing), 'it', 'them')} "
            "(--scaling weak keeps each device's batch)"
        )
    return f"Also searched, not shown: {joined(missing)} devices: {why}."


def dropped_counts(cal: Calibration, frame: pd.DataFrame) -> str:
    """The counts searched, by what rule, and why each without a row has none; ""
    where every count up to the most allowed has its row."""
    searched = cal.machine.device_counts
    missing = missing_counts(cal, frame)
    every = cal.machine.device_counts == list(range(1, int(cal.machine.max_devices) + 1))
    if not missing and every:
        return ""
    said = f"Device counts searched: {', '.join(str(int(n)) for n in searched)}"
    if missing:
        said += f"; {', '.join(map(str, missing))} not shown: {_unsplit(cal, missing)}"
    said += "."
    if not every:
        said += f" The counts searched are {counts_rule(cal)}."
    return said


def above_largest(cal: Calibration, frame: pd.DataFrame, largest: int) -> tuple[str, str]:
    """Why no count above ``largest`` (the largest predicted) was, and what would let
    one be; ("", "") where it is the most allowed."""
    if cal is None or largest >= cal.machine.max_devices:
        return "", ""
    most = int(cal.machine.max_devices)
    searched = cal.machine.device_counts
    shown = frame[frame["accelerators"] > largest]
    rows = set(shown["accelerators"].astype(int))
    flagged = sorted(int(n) for n in shown[shown["flags"] != ""]["accelerators"])
    missing = [n for n in searched if largest < n <= most and n not in rows]
    unsearched = [n for n in range(largest + 1, most + 1) if n not in searched]
    why, fix = [], []
    if unsearched:
        why.append(
            f"{_names(unsearched)} {agreeing(len(unsearched), 'is', 'are')} not searched "
            f"({counts_rule(cal, short=True)})"
        )
    off = [n for n in _off_nodes(cal) if n > largest]
    per_node = _per_node(cal)
    if off and per_node:
        fix.append(f"--max-devices {(most // per_node + 1) * per_node} (whole nodes)")
    if missing:
        kept = cal.run.kept_global_batch
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


def below_the_most(cal: Calibration, frame: pd.DataFrame, largest: int, numbers: str) -> str:
    """The cap sentence where the largest count predicted is below the most allowed."""
    why, _ = above_largest(cal, frame, largest)
    if not why:
        return ""
    return (
        f"{largest} devices is the largest count predicted and still pays ({numbers}), "
        f"though {int(cal.machine.max_devices)} are allowed: {why}; the counts predicted cap "
        "the speedup."
    )


def larger_counts(cal: Calibration, frame: pd.DataFrame, largest: int) -> str:
    """What would predict a count above ``largest`` where more are allowed."""
    why, fix = above_largest(cal, frame, largest)
    if not why:
        return ""
    if fix:
        return f"more devices may pay off: {fix} would predict a count above {largest}"
    return f"more devices may pay off, but no count above {largest} was predicted"


def only_one(cal: Calibration, cap: str = "devices") -> str:
    """Why one device is all the table holds, from the decision's ``cap``."""
    kept = cal.run.kept_global_batch
    if cap == "flagged":
        return "Only one device's prediction passes the plausibility checks (see above)."
    if cap != "batch" or kept is None:
        return "Only one device is available: there is nothing to compare."
    return (
        f"Only one device can train at the global batch {kept:,} kept at every count (strong "
        "scaling): it does not split into whole per-device batches over more devices; "
        "--scaling weak, or a --global-batch that more devices divide, compares counts."
    )
