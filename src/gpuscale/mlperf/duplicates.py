"""Rounds read from several paths, stacked with every result once.

The same result can reach gpuscale twice: a round given twice, one organisation in a
``.tar.gz`` and in a ``.zip``. A result is a ``(round, org, system_id, benchmark)``;
the first path that holds it is kept, a later copy is dropped with a ``duplicate
input`` problem row (saying whether its runs were the same: same run files and run
times). So ``systems``, ``runs`` and ``scores`` never hold a key twice.

One result can also sit in one round under two system names (the same runs to the
millisecond; ``gpuscale.tables.republished``): both rows stay in ``scores`` (the official
tables list both), the second is marked ``same_runs_as`` and :func:`same_runs_problems`
says so in ``problems``.

Within one round, folders whose names differ only in case (``Acme/results/box8`` and
``Acme/results/Box8``, ``Acme/`` and ``acme/``) are one system copied: on a
case-insensitive filesystem they would be one folder, and MLCommons' ids never differ
only in case. :func:`case_duplicates` keeps the one whose name sorts first and drops the
other with a ``duplicate input`` problem row.
"""

from __future__ import annotations

import pandas as pd

from gpuscale.quantities import number as written
from gpuscale.tables import (
    PROBLEMS_SCHEMA,
    ProblemKind,
    ProblemRow,
    RoundTables,
    frame_of,
    problem_row,
)

RESULT = ["round", "org", "system_id", "benchmark"]
SYSTEM = ["round", "org", "system_id"]
DUPLICATE_INPUT = "duplicate input"  # the problems' kind
PROBLEM = ["round", "path", "kind", "message"]
# A result's key (round, org, system id, benchmark folder) and its runs' (file, start,
# stop) triples as text, sorted: two copies of a result with the same runs print alike.
Key = tuple[str, ...]
Print = tuple[str, ...]

# What a ``duplicate input`` problem says, by what was given twice (a whole path, one
# result, a system folder again in another case) and whether its runs were the same.
_SAID = {
    ("path", True): "every one of its {n} results was given in an earlier path with the same "
    "runs; read once",
    ("path", False): "every one of its {n} results was given in an earlier path; the first "
    "copies are kept, these dropped",
    ("result", True): "given again in path {number} with the same runs; read once",
    ("result", False): "given again in path {number} with other runs; the first copy is kept, "
    "this one dropped",
    ("case", True): "differs from {kept} only in case (one system copied, with the same runs; "
    "read once)",
    ("case", False): "differs from {kept} only in case (one system copied; its runs differ: "
    "the first is kept, this one dropped)",
}


def _fingerprints(runs: pd.DataFrame) -> dict[Key, Print]:
    """Each result's runs as (file, start, stop) triples, sorted."""
    found: dict[Key, list[tuple[object, ...]]] = {}
    for row in runs[[*RESULT, "run_file", "run_start_ms", "run_stop_ms"]].itertuples(index=False):
        found.setdefault(tuple(row[:4]), []).append(tuple(row[4:]))
    return {key: tuple(sorted(map(str, v))) for key, v in found.items()}


def _duplicate_notes(
    number: int,
    keys: set[tuple[str, ...]],
    again: set[tuple[str, ...]],
    prints: dict[Key, Print],
    seen: dict[Key, Print],
) -> list[ProblemRow]:
    """The ``duplicate input`` problems of path ``number``: one per result given ``again``
    (whether with the runs ``seen`` first), or one row when the whole path was."""
    if len(again) > 1 and again == keys:  # a whole path given again: one row says so
        same_runs = all(prints.get(k, ()) == seen[k] for k in again)
        message = _SAID[("path", same_runs)].format(n=len(again))
        rounds = ", ".join(sorted({k[0] for k in again}))
        return [problem_row(rounds, f"(path {number})", DUPLICATE_INPUT, message)]
    notes = []
    for key in sorted(again):
        same = prints.get(key, ()) == seen[key]
        message = _SAID[("result", same)].format(number=number)
        notes.append(problem_row(key[0], _where(key), DUPLICATE_INPUT, message))
    return notes


def _where(key: Key) -> str:
    """A result's folder in its round: ``org/results/system/benchmark``."""
    return f"{key[1]}/results/{key[2]}/{key[3]}"


def _fresh(frame: pd.DataFrame, columns: list[str], drop: set[Key]) -> pd.DataFrame:
    """``frame`` without the rows whose ``columns`` hold a key of ``drop``."""
    if frame.empty or not drop:
        return frame
    index = pd.MultiIndex.from_frame(frame[columns].astype(object))
    return frame[~index.isin(list(drop))]


def _unseen_problems(problems: pd.DataFrame, seen: set[tuple[str, ...]]) -> pd.DataFrame:
    """``problems`` less those already ``seen`` (a problem of a file given twice is the
    same problem: said once); ``seen`` grows by them."""
    if problems.empty:
        return problems
    rows = list(map(tuple, problems[PROBLEM].astype(str).itertuples(index=False)))
    unseen = problems[[row not in seen for row in rows]]
    seen |= set(rows)
    return unseen


def combine(parts: list[RoundTables]) -> RoundTables:
    """``parts`` stacked in order, each result and system description kept from the
    first part that has it (see the module docstring)."""
    if len(parts) < 2:
        return RoundTables.concat(parts)
    seen_results: dict[Key, Print] = {}
    seen_systems: set[tuple[str, ...]] = set()
    seen_problems: set[tuple[str, ...]] = set()
    kept = []
    for number, part in enumerate(parts, 1):
        prints = _fingerprints(part.runs)
        keys = set(prints) | set(map(tuple, part.scores[RESULT].itertuples(index=False)))
        again = {k for k in keys if k in seen_results}
        notes = _duplicate_notes(number, keys, again, prints, seen_results)
        for key in keys - again:
            seen_results[key] = prints.get(key, ())
        problems = _unseen_problems(part.problems, seen_problems)
        if notes:
            problems = pd.concat([problems, frame_of(PROBLEMS_SCHEMA, notes)], ignore_index=True)
        systems = set(map(tuple, part.systems[SYSTEM].itertuples(index=False)))
        kept.append(
            RoundTables(
                systems=_fresh(part.systems, SYSTEM, systems & seen_systems),
                runs=_fresh(part.runs, RESULT, again),
                scores=_fresh(part.scores, RESULT, again),
                problems=problems,
            )
        )
        seen_systems |= systems
    return RoundTables.concat(kept)


def same_runs_problems(scores: pd.DataFrame) -> list[ProblemRow]:
    """A ``same runs`` problem row for each result marked ``same_runs_as`` (it repeats the
    runs of another result of its round under another system name: counted once)."""
    if "same_runs_as" not in scores:
        return []
    twins = scores[scores["same_runs_as"].fillna("").astype(str) != ""]
    kept = {
        (r, f"{o}/{s}", b): e
        for r, o, s, b, e in scores[[*RESULT, "energy_kj"]].itertuples(index=False)
    }
    rows = []
    for row in twins.itertuples(index=False):
        message = (
            f"the same {row.runs} runs (start and stop to the millisecond) as "
            f"{row.same_runs_as}: one result under two system names, both listed in scores, "
            f"its runs counted once in analyses (as {row.same_runs_as})"
        )
        energy = kept.get((row.round, row.same_runs_as, row.benchmark))
        if energy == energy and row.energy_kj == row.energy_kj and energy != row.energy_kj:
            message += (
                f"; its energy ({written(row.energy_kj)} kJ) differs from the other's "
                f"({written(energy)} kJ): the same runs measured another way, both kept"
            )
        where = f"{row.org}/results/{row.system_id}/{row.benchmark}"
        rows.append(problem_row(str(row.round), where, ProblemKind.SAME_RUNS, message))
    return rows


def _folded(key: tuple[str, ...]) -> tuple[str, ...]:
    return (key[0], *(part.casefold() for part in key[1:]))


def case_duplicates(tables: RoundTables) -> RoundTables:
    """``tables`` with each result whose org and system folders differ from another's only
    in case dropped (the first in sorted order kept), with a problem row saying so."""
    prints = _fingerprints(tables.runs)
    keys = sorted(set(prints) | set(map(tuple, tables.scores[RESULT].itertuples(index=False))))
    first: dict[tuple[str, ...], tuple[str, ...]] = {}
    again: set[tuple[str, ...]] = set()
    notes = []
    for key in keys:
        kept = first.setdefault(_folded(key), key)
        if kept == key:
            continue
        again.add(key)
        same = prints.get(key, ()) == prints.get(kept, ())
        message = _SAID[("case", same)].format(kept=_where(kept))
        notes.append(problem_row(key[0], _where(key), DUPLICATE_INPUT, message))
    if not again:
        return tables
    systems = {(k[0], k[1], k[2]) for k in again} - {(k[0], k[1], k[2]) for k in first.values()}
    problems = pd.concat([tables.problems, frame_of(PROBLEMS_SCHEMA, notes)], ignore_index=True)
    return RoundTables(
        systems=_fresh(tables.systems, SYSTEM, systems),
        runs=_fresh(tables.runs, RESULT, again),
        scores=_fresh(tables.scores, RESULT, again),
        problems=problems,
    )
