"""What each of the study's findings needs of the data, and the reason said when the data
lacks it (``gpuscale.analysis.study``): each reason names the counts a test reads that
the family lacks, beside the counts it has, never a count it has as missing."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from gpuscale.analysis.metrics import plausible_samples
from gpuscale.quantities import joined
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


def no_samples(own: pd.DataFrame, row: pd.Series) -> str:
    """Why a decomposed ``row`` of ``own`` (a family decomposed against its reference,
    ``gpuscale.analysis.decompose.within_family``) has no convergence factor: which of it
    and its reference lacks a samples-to-converge count (measured, or expected at its
    global batch)."""
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
    lacking = []
    for words, side in sides:
        measured = plausible_samples(side.to_frame().T).iloc[0]
        expected = side.get("expected_samples_to_converge", np.nan)
        if not np.isfinite(float(measured)):
            if not np.isfinite(float(expected)):
                words += " (nor an expected count)"
            lacking.append(words)
    who = either(lacking, "and") or "the fastest system or its reference"
    return (
        f"no measured samples-to-converge count for {who}, so E' cannot be split into "
        "throughput and convergence"
    )


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
