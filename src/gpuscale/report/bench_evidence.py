"""What the report's bench findings rest on: the bench table's evidence grade
(``bench.evidence``: ``strong``, or ``weak`` with its ``evidence_notes``) of each run a
finding reads, and of the N = 1 run each speedup is against (a speedup is only as firm as
both of its runs), said as the CLI says it (``bench``, ``analyze --bench``): a measurement
from weak runs reads as a measurement to repeat, a figure derived from them (a break-even
size) as a prediction to test, with what would make it firm."""

from __future__ import annotations

import pandas as pd

from gpuscale.bench.evidence import FLAGGED, kinds_counted
from gpuscale.bench.support import support
from gpuscale.quantities import agreeing, filled, of_the
from gpuscale.tables.bench import one_device

WEAK = "weak"


def rested_on(scaling: pd.DataFrame, rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (of ``scaling``, ``analysis.bench_scaling``'s) and, for each at N > 1,
    the N = 1 run of ``scaling`` its speedup is read against (``tables.bench.one_device``)."""
    if rows.empty:
        return rows
    at = pd.Series(range(len(scaling)), index=scaling.index, dtype=float)
    base = one_device(scaling.assign(_at=at), "_at").loc[rows.index]
    multi = rows["accelerators"] > 1
    bases = [scaling.index[int(b)] for b in base[multi].dropna()]
    used = list(dict.fromkeys([*rows.index, *bases]))
    return scaling.loc[used]


def _weak(rows: pd.DataFrame) -> pd.DataFrame:
    return rows[rows.get("evidence", pd.Series("", rows.index)).astype(str) == WEAK]


def remedy(rows: pd.DataFrame, of: pd.DataFrame | None = None) -> str:
    """What to bench so that ``rows`` (bench rows) are strong evidence: the steps asked
    are those their models' runs in ``of`` (the whole bench table) need, as the bench's
    notes ask (``bench.support.support``)."""
    found = support(rows, of)
    return "" if found is None else found.remedy(basis=True)


MEASURED, DERIVED = "a measurement to repeat", "a prediction to test"


def weak_tag(scaling: pd.DataFrame, rows: pd.DataFrame, *, derived: bool = False) -> str:
    """``weak evidence (2 of the 2 runs it rests on): a measurement to repeat`` where a run
    a finding on ``rows`` rests on is weak (``derived``: a figure derived from the runs, "a
    prediction to test"), else ``""``."""
    used = rested_on(scaling, rows)
    weak = _weak(used)
    if weak.empty:
        return ""
    if len(used) == 1:
        of = "the run it rests on"
    elif len(weak) == len(used):
        of = f"the {len(used)} runs it rests on"
    else:
        of = f"{len(weak)} of the {len(used)} runs it rests on"
    return f"weak evidence ({of}): {DERIVED if derived else MEASURED}"


def tagged(
    sentence: str, scaling: pd.DataFrame, rows: pd.DataFrame, *, derived: bool = False
) -> str:
    """``sentence`` (ending in a full stop) with :func:`weak_tag` before its stop."""
    tag = weak_tag(scaling, rows, derived=derived)
    return f"{sentence[:-1]} - {tag}." if tag else sentence


def grade_sentence(rows: pd.DataFrame, of: pd.DataFrame | None = None) -> str | None:
    """What the findings on ``rows`` (unflagged bench rows) rest on, where some are weak:
    how many, the kinds of why (the table's Evidence column says each), that a measurement
    from them is to repeat and a figure derived from them a prediction to test, and what
    would make them firm (the steps asked of their models' runs in ``of``, the whole
    table, flagged runs too, as the bench asks); None where every run is strong."""
    weak = _weak(rows)
    if weak.empty:
        return None
    kinds = kinds_counted(weak["evidence_kinds"])
    why = filled(": {}", kinds)
    them = agreeing(len(weak), "it", "them")
    return (
        f"What these findings rest on: {of_the(len(weak), len(rows), 'run')} "
        f"{agreeing(len(weak), 'is', 'are')} weak evidence{why} (the table's Evidence column says "
        f"why, as `gpuscale bench` does): each finding that reads {them} is marked weak, "
        f"{MEASURED} (a figure derived from {them}, such as a break-even size, {DERIVED}); "
        f"{remedy(weak, of)} to make it firm."
    )


def evidence_column(scaling: pd.DataFrame) -> pd.Series:
    """The table's Evidence column: ``strong``, ``weak: `` and the row's notes, or for a
    flagged row ``none: flagged, not trusted`` (never strong: ``bench.evidence``)."""
    grade = scaling.get("evidence", pd.Series("", scaling.index)).fillna("").astype(str)
    notes = scaling.get("evidence_notes", pd.Series("", scaling.index)).fillna("").astype(str)
    weak = (grade == WEAK) & (notes != "")
    return grade.where(~weak, grade + ": " + notes).where(grade != FLAGGED, UNTRUSTED)


UNTRUSTED = "none: flagged, not trusted"


def run_grade(scaling: pd.DataFrame, row: pd.DataFrame) -> str:
    """One measured run's grade in the table's words, for a sentence on it: ``strong
    evidence``, or ``weak evidence (...): a measurement to repeat; bench with ...``."""
    tag = weak_tag(scaling, row)
    if (row.get("evidence", pd.Series(dtype=str)) == FLAGGED).any():
        return UNTRUSTED
    if not tag:
        return "strong evidence"
    return f"{tag}; {remedy(rested_on(scaling, row), scaling)} to make it firm"
