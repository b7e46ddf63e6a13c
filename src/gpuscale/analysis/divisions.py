"""Which division is analysed, and what the others hold that was left out.

MLPerf's closed division runs the rules' reference model and hyperparameters; the open
division may change the model (v1.1's open "BERT" holds Google's runs of a much larger
model at 828 and 1,197 min beside 0.42 min BERT-large runs), so a scaling curve across
both compares different work. The analysis keeps the closed division unless asked
(``AnalysisOptions.division``: closed, open or all), as the plans do
(``gpuscale.planning.systems``), and says what it left out.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from gpuscale.quantities import agreeing, counted, joined
from gpuscale.tables import display_name
from gpuscale.tables.republished import left_out_of_analyses
from gpuscale.tables.workloads import not_scored_by, workload_of

ALL = "all"  # both divisions (``AnalysisOptions.division``)
WHY = "the open division may change the model or its training, so its times do not compare"
# Why a division's results left out do not join the curve of the division analysed.
WHY_LEFT_OUT = {
    "open": WHY,
    "closed": (
        "the closed division runs the reference model and training, which the open results "
        "analysed may change, so their times do not compare"
    ),
}


# A result whose system description names no division (v0.7's SIAT and Tencent files
# lack the field): neither closed nor open, said so rather than as an empty name.
UNNAMED = "no division named"
WHY_UNNAMED = (
    "its system description names no division, so whether it ran the rules' reference "
    "model and training is not known"
)


def division_names(divisions: pd.Series) -> pd.Series:
    """Each division as data writes it, stripped, with ``""`` where none is named (empty,
    missing)."""
    return divisions.astype("string").fillna("").str.strip().astype(str)


def division_option(how: str, other: str) -> str:
    """``how`` (``--division {other} or all draws them``) for results of division ``other``;
    for results with no division named only ``all`` draws them."""
    if other:
        return how.format(other=other)
    return how.format(other=ALL).replace(f"{ALL} or {ALL}", ALL)


def of_other_divisions(scores: pd.DataFrame, division: str, unscored: int = 0) -> str:
    """Why none of ``scores`` (scored, each with an accelerator count) is analysed when none
    is of ``division``: the ``unscored`` results of ``division`` first (its rules score
    none of them), then how many are scored, the divisions they are of (or that none is
    named), why those do not compare, and the option that analyses them."""
    written = set(division_names(scores["division"]))
    others = sorted(written - {""}) + ([UNNAMED] if "" in written else [])
    named = next(iter(sorted(written - {""})), "")  # the option names a division written
    how = division_option("--division {other} or all includes them", named)
    why = [WHY_LEFT_OUT[d] for d in others if d in WHY_LEFT_OUT and d != division]
    said = f"{joined(others)}: {'; '.join([*why, how])}" if why else f"{joined(others)}; {how}"
    unscored_here = (
        f"its {counted(unscored, f'{division}-division result')} "
        f"{agreeing(unscored, 'is', 'are')} not scored by "
        f"{not_scored_by(str(next(iter(scores['round']), '')))} (`gpuscale scores` "
        "gives each reason); "
    )
    return (
        f"{unscored_here if unscored else ''}its {counted(len(scores), 'scored result')} "
        f"{agreeing(len(scores), 'is', 'are')} of another division than {division} ({said})"
    )


def in_division(scores: pd.DataFrame, division: str | None) -> pd.Series:
    """Whether each row of ``scores`` is of ``division`` (every row for None or ``all``)."""
    if division is None or division == ALL:
        return pd.Series(True, index=scores.index)
    return scores["division"].astype(str).str.lower() == division.lower()


def left_out(
    scores: pd.DataFrame, pairs: Iterable[tuple[str, str]], division: str | None, how: str
) -> list[str]:
    """A sentence per (round, workload) of ``pairs`` whose scored results of another
    division than ``division`` were left out: how many, of which division, and ``how``
    to analyse them (the option a command takes, e.g. ``--division open or all``)."""
    if division is None or division == ALL or scores.empty:
        return []
    scored = scores["time_to_train_min"].notna() & ~left_out_of_analyses(scores)
    others = scores[scored & ~in_division(scores, division)]
    out = []
    for round_name, workload in pairs:
        here = others[(others["round"] == round_name) & of_workload(others, workload)]
        for other, rows in here.groupby(division_names(here["division"]), sort=True):
            other = str(other)
            results = counted(len(rows), f"{other}-division result")
            why = WHY_LEFT_OUT.get(
                other,
                f"the {other} division's times need not compare with the {division} division's",
            )
            if not other:
                results, why = f"{counted(len(rows), 'result')} with {UNNAMED}", WHY_UNNAMED
            out.append(
                f"{round_name} {display_name(workload)}: {results} "
                f"left out ({why}; {division_option(how, other)})"
            )
    return out


def contradicted(scores: pd.DataFrame, pairs: Iterable[tuple[str, str]]) -> list[str]:
    """A sentence per result of ``pairs`` (round, workload) left out of the analysis
    because its logs contradict their folder (``log_flag``), naming it and why."""
    if "log_flag" not in scores:
        return []
    flagged = scores[scores["log_flag"].fillna("").astype(str) != ""]
    out = []
    for round_name, workload in pairs:
        here = flagged[(flagged["round"] == round_name) & of_workload(flagged, workload)]
        out += [
            f"{round_name} {display_name(workload)}: {r.org}/{r.system_id} left out of the "
            f"analysis (scored, as MLCommons scores it): {r.log_flag}"
            for r in here.itertuples(index=False)
        ]
    return out


def uncounted(
    scores: pd.DataFrame, pairs: Iterable[tuple[str, str]], division: str | None
) -> list[str]:
    """A sentence per (round, workload) of ``pairs`` whose scored results of ``division``
    (those of another are said by :func:`left_out`) have no accelerator count (a CPU-only
    system, a system description that gives none): left out of the analysis, which counts
    per accelerator, each named (never dropped unsaid)."""
    scored = scores["time_to_train_min"].notna() & ~left_out_of_analyses(scores)
    scored &= in_division(scores, division)
    missing = scores[scored & ~(scores["accelerators"].fillna(0) > 0)]
    out = []
    for round_name, workload in pairs:
        here = missing[(missing["round"] == round_name) & of_workload(missing, workload)]
        if here.empty:
            continue
        names = [f"{r.org}/{r.system_id}" for r in here.itertuples(index=False)]
        out.append(
            f"{round_name} {display_name(workload)}: {joined(names)} left out of the analysis "
            f"(scored, as MLCommons scores it): {agreeing(len(names), 'its', 'their')} system "
            f"{agreeing(len(names), 'description gives', 'descriptions give')} no accelerator "
            "count (CPU only, or a node or per-node count missing or unusable), and speedup and "
            "E' are per accelerator"
        )
    return out


def of_workload(scores: pd.DataFrame, workload: str) -> pd.Series:
    """Whether each row of ``scores`` is of ``workload`` as the data names it: its own
    name, a name that is the same workload across rounds (``workload_of``) or a folder's
    (``benchmark``). The one reading of a workload's rows: the scaling tables
    (``gpuscale.analysis.metrics``) and what a division left out."""
    named = scores["workload"]
    return (
        (named == workload)
        | (named.map(workload_of, na_action="ignore") == workload)
        | (scores["benchmark"] == workload)
    )


def open_analysed(tables: Iterable[tuple[str, str, pd.DataFrame]]) -> list[str]:
    """A caution per (round, workload, scaling table) that holds open-division results
    (asked with ``--division open`` or ``all``): their times, E' and the study's verdicts
    on them may compare other work."""
    out = []
    for round_name, workload, table in tables:
        opened = int((table.get("division", pd.Series(dtype=str)).astype(str) == "open").sum())
        if opened:
            out.append(
                f"{round_name} {display_name(workload)}: "
                f"{counted(opened, 'open-division result')} analysed ({WHY} with the "
                "closed division's or each other: the speedups, E' and the study's verdicts "
                "on them may compare different work)"
            )
    return out
