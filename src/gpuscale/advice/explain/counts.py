"""Which device counts the search tried (``Calibration.device_counts``: powers of two up to
the most allowed, past one node whole nodes), and why a count searched has no row."""

from __future__ import annotations

from itertools import groupby

import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.quantities import agreeing, joined


def _names(counts: list[int]) -> str:
    """``1, 2, 4`` with runs of three or more consecutive counts as ``5-7``."""
    parts: list[str] = []
    for _, run in groupby(enumerate(counts), lambda at: at[1] - at[0]):
        found = [c for _, c in run]
        parts += [f"{found[0]}-{found[-1]}"] if len(found) > 2 else map(str, found)
    return ", ".join(parts)


def _per_node(cal: Calibration) -> int | None:
    network = cal.machine.network
    return (network.inter is not None and network.per_node) or None  # one node: none


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
    most, per_node, off = int(cal.machine.max_devices), _per_node(cal), _off_nodes(cal)
    if short:
        return sentence("counts_rule_short", most=most, per_node=(off and per_node) or None)
    names = _names(off) if per_node and off else None
    return sentence(
        "counts_rule", pow2=most & (most - 1) == 0, most=most, per_node=per_node, off=names
    )


def _unsplit(cal: Calibration, missing: list[int]) -> str:
    run = cal.run
    return sentence(
        "unsplit",
        kept=run.kept_global_batch,
        n=len(missing),
        largest=run.largest_batch,
        accum=run.max_accum,
        missing=tuple(missing),
    )


def missing_counts(cal: Calibration, frame: pd.DataFrame) -> list[int]:
    shown = set(frame["accelerators"].astype(int))
    return [int(n) for n in cal.machine.device_counts if n not in shown]


def dropped_short(cal: Calibration, frame: pd.DataFrame) -> str:
    """The default view's line on the counts searched that have no row."""
    missing = tuple(missing_counts(cal, frame))
    if not missing:
        return ""
    kept = cal.run.kept_global_batch
    return sentence("dropped_short", missing=missing, kept=kept, n=len(missing))


def dropped_counts(cal: Calibration, frame: pd.DataFrame) -> str:
    """The counts searched, by what rule, and why each without a row has none; ""
    where every count up to the most allowed has its row."""
    missing = missing_counts(cal, frame)
    every = cal.machine.device_counts == list(range(1, int(cal.machine.max_devices) + 1))
    if not missing and every:
        return ""
    return sentence(
        "dropped_counts",
        searched=tuple(int(n) for n in cal.machine.device_counts),
        missing=tuple(missing) or None,
        unsplit=_unsplit(cal, missing) if missing else "",
        rule=None if every else counts_rule(cal),
    )


def above_largest(cal: Calibration, frame: pd.DataFrame, largest: int) -> tuple[str, str]:
    """Why no count above ``largest`` (the largest predicted) was, and what would let
    one be; ("", "") where it is the most allowed."""
    if largest >= cal.machine.max_devices:
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
    listed, kept = ", ".join(map(str, missing)), cal.run.kept_global_batch
    if missing and kept is not None:
        does = agreeing(len(missing), "does", "do")
        why.append(
            f"{listed} {does} not split the global batch {kept} kept at every count into "
            "whole per-device batches"
        )
        fix += [f"a --global-batch divisible by {listed}", "--scaling weak"]
    elif missing:
        why.append(f"no per-device batch and accumulation fits {listed}")
    if flagged:
        why.append(f"{', '.join(map(str, flagged))} failed a plausibility check (left out)")
    return "; ".join(why), joined(fix, "or")


def below_the_most(cal: Calibration, frame: pd.DataFrame, largest: int, numbers: str) -> str:
    """The cap sentence where the largest count predicted is below the most allowed."""
    why, _ = above_largest(cal, frame, largest)
    if not why:
        return ""
    most = int(cal.machine.max_devices)
    return sentence("below_the_most", largest=largest, numbers=numbers, most=most, why=why)


def larger_counts(cal: Calibration, frame: pd.DataFrame, largest: int) -> str:
    """What would predict a count above ``largest`` where more are allowed."""
    why, fix = above_largest(cal, frame, largest)
    if not why:
        return ""
    return sentence("larger_counts", fix=fix, largest=largest)


def only_one(cal: Calibration, cap: str = "devices") -> str:
    """Why one device is all the table holds, from the decision's ``cap``."""
    kept = cal.run.kept_global_batch
    case = cap if cap == "flagged" or (cap == "batch" and kept is not None) else "one"
    return sentence("only_one", case=case, kept=kept)
