"""What each of the study's findings needs of the data, and the reason said when the data
lacks it (``gpuscale.analysis.study``): each reason names the counts a test reads that
the family lacks, beside the counts it has, never a count it has as missing."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from gpuscale.analysis.metrics import plausible_samples
from gpuscale.quantities import agreeing, joined, of_the
from gpuscale.tables import display_name


def counts_of(table: pd.DataFrame) -> list[int]:
    """The distinct accelerator counts of ``table``, increasing."""
    return sorted({int(n) for n in table["accelerators"]})


def either(items: Sequence[str], word: str = "or") -> str:
    """``a``, ``a or b``, ``a, b or c`` (``word`` ``and`` for a list of what there is):
    :func:`gpuscale.quantities.joined`, the one list joiner."""
    return joined(items, word)


def counts_words(counts: Iterable[int]) -> str:
    """``8``, ``2 and 8``, ``16, 64 and 128``."""
    return either([f"{n:,}" for n in counts], "and")


_SYSTEMS_HAVE = {0: "every system has", 1: "the one system has", 2: "both systems have"}


def _systems(count: int) -> str:
    """``the one system has``, ``both systems have``, ``all 3 systems have`` (``every
    system has`` where the number is not known: 0)."""
    return _SYSTEMS_HAVE.get(count, f"all {count:,} systems have")


def too_few_counts(
    family: str, counts: Sequence[int], need: int, test: str, systems: int = 0
) -> str | None:
    """None when ``family`` has at least ``need`` distinct counts, else why ``test``
    cannot be read: the counts it has (``systems``: how many systems have them; one is
    "the one system", never "every system")."""
    if len(counts) >= need:
        return None
    if not counts:
        return f"there is no {family} system, and {test} needs at least {need} counts"
    have = (
        f"{_systems(systems)} {counts[0]:,} accelerators"
        if len(counts) == 1
        else f"the systems have {counts_words(counts)} accelerators ({len(counts)} counts)"
    )
    return f"within {family} {have}, and {test} needs at least {need} counts"


def missing_counts(family: str, counts: Sequence[int], wanted: dict[str, bool]) -> str | None:
    """None when every count ``wanted`` (words such as ``at 8`` or ``past 16`` -> whether
    the family has it) is there, else the ones it lacks beside the counts it has."""
    lacking = [words for words, present in wanted.items() if not present]
    if not lacking:
        return None
    return f"within {family} no system {either(lacking)} (its counts: {counts_words(counts)})"


def no_samples(own: pd.DataFrame, row: pd.Series, table: pd.DataFrame | None = None) -> str:
    """Why a decomposed ``row`` of ``own`` (a family decomposed against its reference,
    ``gpuscale.analysis.decompose.within_family``) has no convergence factor: which of it
    and its reference has no usable samples-to-converge count (measured, or expected at
    its global batch), and why: none read from its logs, or one read but flagged as
    impossible (``samples_to_converge_flag``: the first such flag said, and how many of
    ``table``'s results, the workload's, are flagged too)."""
    ref = own[
        (own["org"] == row["reference_org"]) & (own["system_id"] == row["reference_system_id"])
    ]
    sides = [(f"the fastest system at {int(row['accelerators']):,}", row)]
    if len(ref) and not (
        ref.iloc[0]["org"] == row["org"] and ref.iloc[0]["system_id"] == row["system_id"]
    ):
        sides.append(
            (f"its {int(row['reference_accelerators']):,}-accelerator reference", ref.iloc[0])
        )
    unread, flagged, flags, no_expected = [], [], [], []
    for words, side in sides:
        if np.isfinite(float(plausible_samples(side.to_frame().T).iloc[0])):
            continue
        if not np.isfinite(float(side.get("expected_samples_to_converge", np.nan))):
            no_expected.append(words)
        flag = side.get("samples_to_converge_flag", "")
        if isinstance(flag, str) and flag:
            flagged.append(words)
            flags.append(flag)
        else:
            unread.append(words)
    parts = []
    if unread:
        parts.append(f"no measured samples-to-converge count for {either(unread, 'and')}")
    if flagged:
        counts = "counts" if len(flagged) > 1 else "count"
        parts.append(
            f"the samples-to-converge {counts} read for {either(flagged, 'and')} "
            f"{agreeing(len(flagged), 'is', 'are')} flagged as impossible "
            f"({flags[0]}{_flagged_among(table)})"
        )
    if len(no_expected) == 2:
        parts.append("neither has an expected count at its global batch")
    elif no_expected:
        parts.append(f"{no_expected[0]} has no expected count at its global batch")
    who = joined(parts) or "no samples-to-converge count for the fastest system or its reference"
    return f"{who}, so E' cannot be split into throughput and convergence"


def _flagged_among(table: pd.DataFrame | None) -> str:
    """``; all 13 results of the workload are flagged`` where ``table`` (the workload's
    results) has flagged counts, else ""."""
    if table is None or "samples_to_converge_flag" not in table:
        return ""
    flags = table["samples_to_converge_flag"]
    count = int((flags.notna() & (flags.astype(str) != "")).sum())
    if not count:
        return ""
    verb = agreeing(count, "is", "are")
    return f"; {of_the(count, len(table), 'result')} of the workload {verb} flagged"


def llama_lacking(own: pd.DataFrame, family: str) -> str | None:
    """None when ``own`` (a family against its reference) has a system other than the
    reference at 4-8 accelerators (whose E' can be above 1) and 2 counts at 16-64 (a loss
    per doubling), else what it lacks beside the counts it has."""
    counts = counts_of(own)
    small = own[own["accelerators"].between(4, 8)]
    reference = (small["org"] == small["reference_org"]) & (
        small["system_id"] == small["reference_system_id"]
    )
    later = [n for n in counts if 16 <= n <= 64]
    parts = []
    if small.empty:
        parts.append("no system at 4-8")
    elif reference.all():
        parts.append("its only system at 4-8 is its reference (E' 1 by definition)")
    if not later:
        parts.append("no system at 16-64")
    elif len(later) < 2:
        parts.append(f"one count at 16-64 ({later[0]:,}; a loss per doubling needs 2)")
    if not parts:
        return None
    return f"within {family} {joined(parts)} (its counts: {counts_words(counts)})"


def linear_lacking(
    tables: dict[str, pd.DataFrame], family: str, spanned: list[str], window: tuple[int, int]
) -> str | None:
    """None when RetinaNet and another of the study's workloads in ``tables`` have a
    ``family`` system in ``window`` (``spanned``: the workloads that do), else what is
    missing."""
    at = f"{window[0]}-{window[1]}"
    if "retinanet" not in spanned:
        retina = tables["retinanet"]
        counts = counts_of(retina[retina["accelerator_family"] == family])
        has = f"its counts: {counts_words(counts)}" if counts else f"no {family} system at all"
        return f"RetinaNet has no {family} system at {at} ({has})"
    if len(spanned) >= 2:
        return None
    others = [display_name(w) for w in tables if w != "retinanet"]
    if not others:
        return "RetinaNet is the only one of the study's workloads analysed"
    return (
        f"within {family} no other workload analysed ({either(others, 'and')}) has a system at {at}"
    )
