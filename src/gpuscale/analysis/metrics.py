"""Scaling metrics of the systems of one benchmark, relative to a reference system.

With ``T`` a system's official time to train (minutes), ``N`` its accelerators and
``T_ref``, ``N_ref`` those of the reference system:

* speedup ``S = T_ref / T``
* efficiency ``E = S / N`` (the study's definition; ideal 1 only when N_ref = 1)
* normalised efficiency ``E' = S / (N / N_ref)`` (1 = perfect scaling from the reference)
* accelerator-hours ``N * T / 60`` (column ``accelerator_hours``; TPUs and others count the same)
* throughput per accelerator ``samples / (T * 60) / N`` for results whose convergence
  counts samples (``convergence_unit``) and is not flagged as impossible.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuscale.analysis.divisions import in_division, of_workload
from gpuscale.analysis.outliers import outlier_column, outliers
from gpuscale.analysis.superlinear import superlinear
from gpuscale.names import UnknownNameError, resolve_choice, resolve_families, resolve_workload
from gpuscale.quantities import filled
from gpuscale.tables import CARRIED_COLUMNS, SCALING_COLUMNS, Unit, convergence_unit
from gpuscale.tables.analysis_request import DIVISIONS
from gpuscale.tables.checks import check_families, check_table, check_text
from gpuscale.tables.measures import (
    accelerator_hours,
    efficiency,
    normalized_efficiency,
    speedup,
)
from gpuscale.tables.republished import is_log_flagged, is_same_runs_copy
from gpuscale.tables.rounds import UNKNOWN_FAMILY
from gpuscale.tables.spelling import did_you_mean


@dataclass(frozen=True, slots=True)
class Reference:
    """The system every other system is compared with (per accelerator family when the
    rule is ``family``)."""

    org: str
    submitter: str
    system_id: str
    accelerator_family: str
    accelerators: int
    time_to_train_min: float
    # why its score is less certain (scored from fewer result files than the rules
    # require): every speedup and E' rests on it, so it is said with it
    score_reason: str = ""


class ReferenceNotFoundError(ValueError):
    """The asked-for reference system has no score for this benchmark."""


def scored_systems(
    scores: pd.DataFrame,
    *,
    division: str | None = None,
    availability: str | None = None,
    families: list[str] | None = None,
    duplicates: bool = False,
) -> pd.DataFrame:
    """Rows of ``scores`` that have an official score and a known accelerator count,
    optionally filtered by division (None or ``all``: both), availability (substring,
    case-insensitive) and accelerator family; a result repeated under a second system name
    in its round (``same_runs_as``) once, unless ``duplicates``; none whose logs contradict
    their folder (``log_flag``)."""
    keep = scores["time_to_train_min"].notna() & (scores["accelerators"].fillna(0) > 0)
    keep &= ~is_log_flagged(scores)
    if not duplicates:
        keep &= ~is_same_runs_copy(scores)
    keep &= in_division(scores, division)
    if availability:
        keep &= scores["availability"].str.lower().str.contains(availability.lower(), regex=False)
    if families:
        keep &= scores["accelerator_family"].isin(families)
    return with_names(scores[keep])


# A name a result's system file may lack, and what stands for it: the submitter's folder,
# the system's file stem, the family of a system that names no accelerator.
NAME_FALLBACKS = {"submitter": "org", "system_name": "system_id"}


def with_names(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every system named: a missing submitter is its folder (``org``), a
    missing system name its id, a missing accelerator family ``UNKNOWN_FAMILY``
    (a copy only where one is missing; v0.7 leaves a system file's fields empty)."""
    gaps = {c: frame[c].isna() for c in (*NAME_FALLBACKS, "accelerator_family") if c in frame}
    if not any(gap.any() for gap in gaps.values()):
        return frame
    out = frame.copy()
    for column, fallback in NAME_FALLBACKS.items():
        if column in gaps and fallback in out:
            out[column] = out[column].fillna(out[fallback])
    if "accelerator_family" in gaps:
        out["accelerator_family"] = out["accelerator_family"].fillna(UNKNOWN_FAMILY)
    return out


def _with_units(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with ``convergence_unit``, ``samples_to_converge_flag`` and
    ``score_reason`` (a scores table from before they existed, or made by hand: the unit
    of its workload and round, nothing flagged, no reason)."""
    if all(c in frame for c in ("convergence_unit", "samples_to_converge_flag", "score_reason")):
        return frame
    out = frame.copy()
    if "convergence_unit" not in out:
        units = [convergence_unit(w, r) for w, r in zip(out["workload"], out["round"], strict=True)]
        out["convergence_unit"] = [str(u or "") for u in units]
    for column in ("samples_to_converge_flag", "score_reason"):
        if column not in out:
            out[column] = ""
    return out


def plausible_samples(frame: pd.DataFrame) -> pd.Series:
    """``samples_to_converge`` where it is not flagged as impossible (NaN where it is:
    ``samples_to_converge_flag`` gives why), for every computation built on it."""
    flags = frame.get("samples_to_converge_flag")
    if flags is None:
        return frame["samples_to_converge"].astype(float)
    return frame["samples_to_converge"].astype(float).where(flags.fillna("") == "")


def flagged_results(results: pd.DataFrame | None) -> frozenset[tuple[str, str, str, str]]:
    """(round, org, system_id, benchmark) of each result of a scores (or scaling) table
    whose samples to converge are flagged as impossible (``samples_to_converge_flag``);
    none for None or a table without the column."""
    if results is None or "samples_to_converge_flag" not in results:
        return frozenset()
    flagged = results[results["samples_to_converge_flag"].fillna("").astype(str) != ""]
    columns = [flagged[c].astype(str) for c in ("round", "org", "system_id", "benchmark")]
    return frozenset(zip(*columns, strict=True))


def study_reference(frame: pd.DataFrame) -> pd.Series:
    """The study's rule: the fewest accelerators, and among those the slowest system
    (ties broken by submitter and system id, so the choice is deterministic)."""
    counts = frame["accelerators"].to_numpy(float)
    times = frame["time_to_train_min"].to_numpy(float)
    fewest = np.flatnonzero(counts == np.nanmin(counts))

    def order(pos: int) -> tuple:  # slowest first, then by name; NaN last (as pandas sorts)
        names = (frame["submitter"].iat[pos], frame["system_id"].iat[pos])
        return (
            np.isnan(times[pos]),
            -times[pos],
            *((pd.isna(name), "" if pd.isna(name) else str(name)) for name in names),
        )

    # a sort of positions, not of the frame: a sort copies every column
    return frame.iloc[min(fewest, key=order)]


def family_reference(group: pd.DataFrame) -> pd.Series:
    """One accelerator family's reference, like with like: the study's rule (fewest
    accelerators, the slowest among them) over its systems that are no outliers
    (``gpuscale.analysis.outliers``: far from the family's others at their count, or
    resting on such a submitter's software alone); over all of them where every one is."""
    kept = group[outlier_column(group).to_numpy() == ""]
    return study_reference(kept if len(kept) else group)


def _as_reference(row: pd.Series) -> Reference:
    return Reference(
        org=row["org"],
        submitter=row["submitter"],
        system_id=row["system_id"],
        accelerator_family=row["accelerator_family"],
        accelerators=int(row["accelerators"]),
        time_to_train_min=float(row["time_to_train_min"]),
        score_reason=reason if isinstance(reason := row.get("score_reason"), str) else "",
    )


def find_reference(
    frame: pd.DataFrame, rule: str, systems: pd.DataFrame | None = None
) -> pd.Series:
    """The reference row for ``rule``: ``study`` or ``SUBMITTER/SYSTEM_ID`` (the submitter
    as the JSON names it or its folder name; case ignored). Where no row of ``frame``
    matches, :class:`ReferenceNotFoundError` says whether ``systems`` (the whole scores
    table; default ``frame``) has that system, unscored for this benchmark, or no such
    system at all, with the closest system of ``frame``."""
    if rule == "study":
        return study_reference(frame)
    if "/" not in rule:
        raise ReferenceNotFoundError(
            f"reference {rule!r}{did_you_mean(rule, ('study', 'family'))}: use study, family "
            "or SUBMITTER/SYSTEM_ID"
        )
    match = frame[_named(frame, rule)]
    if not match.empty:
        return match.iloc[0]
    every = frame if systems is None else systems
    if _named(every, rule).any():
        raise ReferenceNotFoundError(_unscored_here(frame, every, rule))
    names = {
        f"{o}/{i}".lower(): f"{o}/{i}"
        for o, i in zip(frame["submitter"], frame["system_id"], strict=True)
    }
    close = difflib.get_close_matches(rule.lower(), list(names), n=1, cutoff=0)
    # which benchmark and rounds: a report or an analysis of several asks it of each
    workload = ", ".join(sorted(frame["workload"].astype(str).unique()))
    rounds = ", ".join(sorted(frame["round"].astype(str).unique()))
    closest = filled("; the closest scored there: {}", next((names[c] for c in close), ""))
    raise ReferenceNotFoundError(
        f"reference {rule!r} names no system scored for {workload} ({rounds}){closest}"
    )


def _unscored_here(frame: pd.DataFrame, every: pd.DataFrame, rule: str) -> str:
    """Why a system that exists is no reference for ``frame``'s workload: which workload
    and rounds it has no score for, and those it has one for, so that a reference named
    across several benchmarks says which of them it cannot serve."""
    workload = ", ".join(sorted(frame["workload"].astype(str).unique()))
    rounds = ", ".join(sorted(frame["round"].astype(str).unique()))
    mine = every[_named(every, rule) & every["time_to_train_min"].notna()]
    scored = sorted(mine["workload"].astype(str).unique())
    where = filled(": it is scored for {}", ", ".join(scored))
    return (
        f"reference {rule} has no official score for {workload} ({rounds}){where}; a "
        "system serves as the reference only where it ran: ask for those benchmarks alone, "
        "or take the reference family or study (one per benchmark)"
    )


def _named(frame: pd.DataFrame, rule: str) -> pd.Series:
    """Rows of ``frame`` whose system ``SUBMITTER/SYSTEM_ID`` names (the submitter or its
    folder, ``org``), ignoring case."""
    who, system_id = (part.lower() for part in rule.split("/", 1))
    submitter = frame["submitter"].astype(str).str.lower()
    return (frame["system_id"].astype(str).str.lower() == system_id) & (
        (submitter == who) | (frame["org"].astype(str).str.lower() == who)
    )


def with_reference(frame: pd.DataFrame, ref: pd.Series) -> pd.DataFrame:
    """``frame`` with speedup, efficiency and E' against the reference row ``ref`` (and
    ``superlinear`` where it has that column)."""
    out = frame.copy()
    t_ref, n_ref = float(ref["time_to_train_min"]), float(ref["accelerators"])
    n = out["accelerators"].astype(float)
    out["reference_org"] = ref["org"]
    out["reference_submitter"] = ref["submitter"]
    out["reference_system_id"] = ref["system_id"]
    out["reference_accelerators"] = int(n_ref)
    out["reference_time_to_train_min"] = t_ref
    out["speedup"] = speedup(t_ref, out["time_to_train_min"])
    out["efficiency"] = efficiency(out["speedup"], n)
    out["normalized_efficiency"] = normalized_efficiency(out["speedup"], n, n_ref)
    if "superlinear" in out:  # why an E' above 1 is no scaling: against this reference
        out["superlinear"] = superlinear(out)
    return out


def within_own_family(group: pd.DataFrame) -> pd.DataFrame:
    """One accelerator family's systems (``group``) against the family's own reference
    (:func:`family_reference`): the E' that ``--reference family``, the study's findings
    and the picks within a family (``equilibrium_by_family``) all say, whatever reference
    the table they come from was computed against."""
    return group if group.empty else with_reference(group, family_reference(group))


def read_filters(
    scores: pd.DataFrame, division: str | None, families: Sequence[str] | str | None
) -> tuple[str | None, list[str] | None, list[str]]:
    """``division`` and ``families`` as typed, read against ``scores`` as every command
    reads names (``clo`` is closed, ``H100`` H100-SXM5-80GB; one family may be given as
    text): the division, the families (None: all) and a note for each family read so.
    :class:`~gpuscale.names.UnknownNameError` for a name that is none."""
    asked = [families] if isinstance(families, str) else families
    read, notes = counted_families(scores, asked)
    return division and resolve_choice(division, DIVISIONS, "division"), read or None, notes


def counted_families(
    scores: pd.DataFrame, asked: Sequence[str] | None
) -> tuple[list[str], list[str]]:
    """The families ``asked`` read among those of ``scores`` a scaling table can hold (a
    system with an accelerator count), and the notes of how each was read
    (:func:`~gpuscale.names.resolve_families`). A family whose systems have no count (``CPU
    only``) is refused saying so, not offered: every table leaves such systems out."""
    counted = (pd.to_numeric(scores["accelerators"], errors="coerce").fillna(0) > 0).to_numpy(bool)
    family = scores["accelerator_family"].astype("string")
    valid = family[counted].dropna().unique().tolist()
    uncounted = set(family[~counted].dropna()) - set(valid)
    for name in asked or ():
        if (found := [u for u in uncounted if u.casefold() == name.strip().casefold()]) != []:
            listed = ", ".join(sorted(valid))
            why = (
                f"the systems of {found[0]} have no accelerator count, so no scaling table "
                f"holds them (each command names them as left out); valid here: {listed}"
            )
            raise UnknownNameError(f"{name!r}: {why}", typed=name, why=why)
    return resolve_families(asked, valid)


def scaling_table(
    scores: pd.DataFrame,
    benchmark: str,
    *,
    reference: str = "study",
    division: str | None = "closed",
    availability: str | None = None,
    families: list[str] | None = None,
    duplicates: bool = False,
) -> pd.DataFrame:
    """Speedup, efficiency and E' of every scored system of one benchmark (or workload).

    ``benchmark`` is read as every command reads ``--benchmark`` (``gpuscale.names``:
    ``BERT``, ``Llama2 70B LoRA``, ``dlrm`` for DLRM DCNv2), against the workloads of
    ``scores``: :class:`~gpuscale.names.UnknownNameError` (a ValueError) for a name that is
    none of them, with the closest, or with the bundled rounds that hold a workload these
    scores lack. ``reference``: ``study`` (fewest accelerators, slowest among them),
    ``family`` (the same rule within each accelerator family) or ``SUBMITTER/SYSTEM_ID``
    (case ignored). Columns: see ``gpuscale.tables.SCALING_COLUMNS``, then ``framework`` where
    ``scores`` carry it (``analysis.software.with_framework``). Empty when no
    system matches the filters. A result repeated under a second system name in its
    round counts once; ``duplicates=True`` counts both names, as the study's Table I did
    (29 Llama2 70B LoRA systems in v4.1). ``division``: ``closed`` (the default, as
    ``analyze`` and ``gpuscale analyze``), ``open``, or ``all`` (None) for both on one curve.
    ``division`` and ``families`` are read as the command reads them (:func:`read_filters`);
    how a family was read (``H100`` as H100-SXM5-80GB, and what else it could mean) is in
    the table's ``attrs["notes"]``, as a plan's. ``scores`` is checked first
    (``gpuscale.tables.checks``: its columns, no time to train <= 0).
    """
    check_table(scores, "scores", "scores")
    for name, value in (("benchmark", benchmark), ("reference", reference)):
        check_text(value, name)
    for name, value in (("division", division), ("availability", availability)):
        check_text(value, name, optional=True)
    check_families(families)
    if not isinstance(duplicates, bool):  # duplicates="no" is truthy: both names, unasked
        raise TypeError(f"duplicates must be True or False, not {duplicates!r:.60}")
    division, families, notes = read_filters(scores, division, families)
    table = workload_scaling_table(
        scores,
        resolve_workload(benchmark, scores, call="scaling_table({round}.scores, ...)"),
        reference=reference,
        division=division,
        availability=availability,
        families=families,
        duplicates=duplicates,
    )
    table.attrs["notes"] = notes
    return table


def workload_scaling_table(
    scores: pd.DataFrame,
    workload: str,
    *,
    reference: str = "study",
    division: str | None = None,
    availability: str | None = None,
    families: list[str] | None = None,
    duplicates: bool = False,
) -> pd.DataFrame:
    """:func:`scaling_table` of a workload as the data names it (its cross-round name or
    a folder's), unchecked: empty where ``scores`` lack it (a round without it).
    ``division``, ``availability``, ``families``, ``duplicates``: :func:`scored_systems`'s
    filters. The scores' ``CARRIED_COLUMNS`` (``framework``) follow ``SCALING_COLUMNS``
    where the scores have them."""
    frame = _with_units(
        scored_systems(
            scores,
            division=division,
            availability=availability,
            families=families,
            duplicates=duplicates,
        )
    )
    frame = frame[of_workload(frame, workload).to_numpy(bool)]
    columns = [*SCALING_COLUMNS, *(c for c in CARRIED_COLUMNS if c in scores)]
    if frame.empty:  # no row, each column of a full table's dtype (not all object)
        return pd.DataFrame({c: frame[c] if c in frame else _empty_column(c) for c in columns})
    frame = frame.assign(outlier=outliers(frame))
    if reference == "family":
        parts = [
            within_own_family(group) for _, group in frame.groupby("accelerator_family", sort=True)
        ]
        out = pd.concat(parts)
    else:
        out = with_reference(frame, find_reference(frame, reference, scores))
    n = out["accelerators"].astype(float)
    out["accelerator_hours"] = accelerator_hours(n, out["time_to_train_min"])
    per_s = plausible_samples(out) / (out["time_to_train_min"] * 60.0) / n
    out["samples_per_s_per_accelerator"] = np.where(
        out["convergence_unit"] == str(Unit.SAMPLES), per_s, np.nan
    )
    out["reference_rule"] = reference
    out["superlinear"] = superlinear(out)
    out = out.sort_values(["accelerators", "time_to_train_min", "system_id"])
    return out.reset_index(drop=True)[columns]


# The columns a scaling table adds that hold text, and its one whole number: every other
# column it adds is a float64 measure
_ADDED_TEXT = (
    "reference_rule",
    "reference_org",
    "reference_submitter",
    "reference_system_id",
    "superlinear",
    "outlier",
)


def _empty_column(name: str) -> pd.Series:
    """A column ``name`` of an empty scaling table that its scores lack, of its dtype."""
    if name in _ADDED_TEXT:
        return pd.Series(dtype=str)
    return pd.Series(dtype="int64" if name == "reference_accelerators" else float)


def references(table: pd.DataFrame) -> list[Reference]:
    """The reference systems a scaling table was computed against."""
    refs = table.drop_duplicates(["reference_org", "reference_system_id"])
    out = []
    for row in refs.itertuples(index=False):
        match = table[
            (table["system_id"] == row.reference_system_id) & (table["org"] == row.reference_org)
        ]
        out.append(_as_reference(match.iloc[0]))
    return out
