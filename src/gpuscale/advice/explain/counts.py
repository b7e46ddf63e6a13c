"""Which device counts the search tried (``Calibration.device_counts``: powers of two up to
the most allowed, past one node whole nodes), and why a count searched has no row."""

from __future__ import annotations

from itertools import groupby

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.records import Counts
from gpuscale.quantities import agreeing, joined


def _names(counts: list[int]) -> str:
    """``1, 2, 4`` with runs of three or more consecutive counts as ``5-7``."""
    parts: list[str] = []
    for _, run in groupby(enumerate(counts), lambda at: at[1] - at[0]):
        found = [c for _, c in run]
        parts += [f"{found[0]}-{found[-1]}"] if len(found) > 2 else map(str, found)
    return ", ".join(parts)


def counts_rule(counts: Counts, short: bool = False) -> str:
    """The rule the counts searched follow, in words (``short``: in a clause)."""
    most, per_node, off = counts.most, counts.per_node, counts.off_nodes
    if short:
        return sentence("counts_rule_short", most=most, per_node=(off and per_node) or None)
    names = _names(list(off)) if per_node and off else None
    return sentence("counts_rule", pow2=counts.pow2, most=most, per_node=per_node, off=names)


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


def dropped_short(cal: Calibration, counts: Counts) -> str:
    """The default view's line on the counts searched that have no row."""
    if not counts.missing:
        return ""
    kept = cal.run.kept_global_batch
    return sentence("dropped_short", missing=counts.missing, kept=kept, n=len(counts.missing))


def dropped_counts(cal: Calibration, counts: Counts) -> str:
    """The counts searched, by what rule, and why each without a row has none; ""
    where every count up to the most allowed has its row."""
    missing = list(counts.missing)
    if not missing and counts.every:
        return ""
    return sentence(
        "dropped_counts",
        searched=counts.searched,
        missing=counts.missing or None,
        unsplit=_unsplit(cal, missing) if missing else "",
        rule=None if counts.every else counts_rule(counts),
    )


def above_largest(cal: Calibration, counts: Counts) -> tuple[str, str]:
    """Why no count above the focus (the largest predicted where the search stopped) was,
    and what would let one be; ("", "") where it is the most allowed."""
    why, fix = [], []
    if counts.unsearched_above:
        unsearched = list(counts.unsearched_above)
        why.append(
            f"{_names(unsearched)} {agreeing(len(unsearched), 'is', 'are')} not searched "
            f"({counts_rule(counts, short=True)})"
        )
    if counts.whole_nodes is not None:
        fix.append(f"--max-devices {counts.whole_nodes} (whole nodes)")
    missing, kept = counts.missing_above, cal.run.kept_global_batch
    listed = ", ".join(map(str, missing))
    if missing and kept is not None:
        does = agreeing(len(missing), "does", "do")
        why.append(
            f"{listed} {does} not split the global batch {kept} kept at every count into "
            "whole per-device batches"
        )
        fix += [f"a --global-batch divisible by {listed}", "--scaling weak"]
    elif missing:
        why.append(f"no per-device batch and accumulation fits {listed}")
    if counts.flagged_above:
        flagged = ", ".join(map(str, counts.flagged_above))
        why.append(f"{flagged} failed a plausibility check (left out)")
    return "; ".join(why), joined(fix, "or")


def below_the_most(cal: Calibration, counts: Counts, largest: int, numbers: str) -> str:
    """The cap sentence where the largest count predicted is below the most allowed."""
    why, _ = above_largest(cal, counts)
    if not why:
        return ""
    return sentence("below_the_most", largest=largest, numbers=numbers, most=counts.most, why=why)


def larger_counts(cal: Calibration, counts: Counts, largest: int) -> str:
    """What would predict a count above ``largest`` (the focus) where more are allowed."""
    why, fix = above_largest(cal, counts)
    if not why:
        return ""
    return sentence("larger_counts", fix=fix, largest=largest)


def only_one(cal: Calibration, cap: str = "devices") -> str:
    """Why one device is all the table holds, from the decision's ``cap``."""
    kept = cal.run.kept_global_batch
    case = cap if cap == "flagged" or (cap == "batch" and kept is not None) else "one"
    return sentence("only_one", case=case, kept=kept)
