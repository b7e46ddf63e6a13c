"""Rounds read from several paths, stacked with every result once.

The same result can reach gpuscale twice: a round given twice, one organisation in a
``.tar.gz`` and in a ``.zip``. A result is a ``(round, org, system_id, benchmark)``;
the first path that holds it is kept, a later copy is dropped with a ``duplicate
input`` problem row (saying whether its runs were the same: same run files and run
times). So ``systems``, ``runs`` and ``scores`` never hold a key twice.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from gpuscale.tables import RoundTables, problem_row

RESULT = ["round", "org", "system_id", "benchmark"]
SYSTEM = ["round", "org", "system_id"]
DUPLICATE_INPUT = "duplicate input"  # the problems' kind
PROBLEM = ["round", "path", "kind", "message"]


def _fingerprints(runs: Any) -> dict[tuple[str, ...], tuple[Any, ...]]:
    """Each result's runs as (file, start, stop) triples, sorted."""
    found: dict[tuple[str, ...], list[tuple[Any, ...]]] = {}
    for row in runs[[*RESULT, "run_file", "run_start_ms", "run_stop_ms"]].itertuples(index=False):
        found.setdefault(tuple(row[:4]), []).append(tuple(row[4:]))
    return {key: tuple(sorted(map(str, v))) for key, v in found.items()}


def combine(parts: list[RoundTables]) -> RoundTables:
    """``parts`` stacked in order, each result and system description kept from the
    first part that has it (see the module docstring)."""
    if len(parts) < 2:
        return RoundTables.concat(parts)
    seen_results: dict[tuple[str, ...], tuple[Any, ...]] = {}
    seen_systems: set[tuple[str, ...]] = set()
    seen_problems: set[tuple[str, ...]] = set()
    kept = []
    for number, part in enumerate(parts, 1):
        prints = _fingerprints(part.runs)
        keys = set(prints) | set(map(tuple, part.scores[RESULT].itertuples(index=False)))
        again = {k for k in keys if k in seen_results}
        notes = []
        for key in sorted(again):
            same = prints.get(key, ()) == seen_results[key]
            notes.append(
                problem_row(
                    key[0],
                    f"{key[1]}/results/{key[2]}/{key[3]}",
                    DUPLICATE_INPUT,
                    f"given again in path {number}"
                    + (
                        " with the same runs; read once"
                        if same
                        else " with other runs; the first copy is kept, this one dropped"
                    ),
                )
            )
        if len(again) > 1 and again == keys:  # a whole path given again: one row says so
            same_runs = all(prints.get(k, ()) == seen_results[k] for k in again)
            notes = [
                {
                    "round": ", ".join(sorted({k[0] for k in again})),
                    "path": f"(path {number})",
                    "kind": DUPLICATE_INPUT,
                    "message": f"every one of its {len(again)} results was given in an earlier "
                    "path"
                    + (
                        " with the same runs; read once"
                        if same_runs
                        else "; the first copies are kept, these dropped"
                    ),
                }
            ]
        for key in keys - again:
            seen_results[key] = prints.get(key, ())
        # a problem of a file given twice is the same problem: said once
        problems = part.problems
        if not problems.empty:
            rows = list(map(tuple, problems[PROBLEM].astype(str).itertuples(index=False)))
            problems = problems[[row not in seen_problems for row in rows]]
            seen_problems |= set(rows)

        def fresh(frame: Any, columns: list[str], drop: set[tuple[str, ...]]) -> Any:
            if frame.empty or not drop:
                return frame
            index = pd.MultiIndex.from_frame(frame[columns].astype(object))
            return frame[~index.isin(list(drop))]

        systems = set(map(tuple, part.systems[SYSTEM].itertuples(index=False)))
        kept.append(
            RoundTables(
                systems=fresh(part.systems, SYSTEM, systems & seen_systems),
                runs=fresh(part.runs, RESULT, again),
                scores=fresh(part.scores, RESULT, again),
                problems=pd.concat(
                    [problems, pd.DataFrame(notes, columns=part.problems.columns)],
                    ignore_index=True,
                )
                if notes
                else problems,
            )
        )
        seen_systems |= systems
    return RoundTables.concat(kept)
