"""Results republished across rounds: the same runs scored again in a later round.

Submitters may carry a result into later rounds unchanged (NVIDIA's ``eos_n434`` BERT is
in v3.1, v4.0 and v4.1). Two results are the same when their runs are: the same workload
on the same accelerator count, and the same set of (``run_start_ms``, ``run_stop_ms``)
pairs, to the millisecond. ``first_round`` is the earliest loaded round holding it (a
user's own folder only where no published round does), and ``republished_in`` the other
loaded rounds that hold it (comma-separated, empty when none); a row is a republished copy
when its ``round`` is not its ``first_round``. These are what the analyses read; what a
command shows also looks at the bundled rounds before the newest loaded one
(``gpuscale.mlperf.earlier.first_published``, the same test).

Within one round a result can also appear under two system names (Dell's v4.1 Llama2
``8xXE9680x8H100-SXM-80GB`` and ``...-POWER``: the same 10 runs; Sustainable Metal Cloud's
v4.0 ``smc-ac-power`` and ``smc-dc-power`` folders). The same test finds them: such a row
gets ``same_runs_as``, the ``org/system_id`` of the one kept (a valid time first, then the
plain name a reader looks for: one without a ``power`` part, the shorter, then by name).
Both rows stay in ``scores`` (the official table lists both); analyses count the runs
once (:func:`counted_in_analyses`, its runs :func:`runs_counted_once`), while the energy table
keeps each power measurement (the same runs measured at another point of the power
chain are another measurement); the ingest adds a ``same runs`` row to ``problems``.
"""

from __future__ import annotations

import math
import re
from typing import TYPE_CHECKING

from gpuscale.tables.workloads import own_folder, round_key

if TYPE_CHECKING:
    import pandas as pd

KEY = ["round", "org", "system_id", "benchmark"]


def _fingerprints(runs: pd.DataFrame) -> dict[tuple, tuple]:
    """{(round, org, system_id, benchmark): the sorted (start, stop) pairs of its runs}; a
    run missing a time or a key is in none (as ``groupby`` leaves out a missing key)."""
    timed = runs.dropna(subset=["run_start_ms", "run_stop_ms", *KEY])
    starts = timed["run_start_ms"].astype(float).tolist()
    stops = timed["run_stop_ms"].astype(float).tolist()
    pairs: dict[tuple, list[tuple[float, float]]] = {}
    # one pass in plain Python: a pandas group per result took most of a second
    for key, start, stop in zip(
        timed[KEY].itertuples(index=False, name=None), starts, stops, strict=True
    ):
        pairs.setdefault(key, []).append((start, stop))
    return {key: tuple(sorted(found)) for key, found in pairs.items()}


def _same_runs(scores: pd.DataFrame, runs: pd.DataFrame) -> dict[tuple, list[int]]:
    """Rows of ``scores`` (positions) grouped by (workload, accelerators, their runs)."""
    prints = _fingerprints(runs)
    groups: dict[tuple, list[int]] = {}
    for i, row in enumerate(scores[[*KEY, "workload", "accelerators"]].itertuples(index=False)):
        found = prints.get(tuple(row[:4]))
        if found:
            groups.setdefault((row.workload, row.accelerators, found), []).append(i)
    return groups


def mark_copies(scores: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """``scores`` with ``first_round``, ``republished_in`` (across the rounds loaded) and
    ``same_runs_as`` (within a round) set."""
    scores = scores.copy()
    scores["first_round"] = scores["round"].astype(object)
    scores["republished_in"] = ""
    scores["same_runs_as"] = ""
    if scores.empty or runs.empty:
        return scores
    groups = _same_runs(scores, runs)
    _mark_republished(scores, groups)
    _mark_twins(scores, groups)
    return scores


_POWER_PART = re.compile(r"(^|[-_ ./])power($|[-_ ./])", re.IGNORECASE)


def _kept_first(scores: pd.DataFrame, members: list[int]) -> list[int]:
    """``members`` in the order one is kept: a valid time, then the plain name (no
    ``power`` part in its folder or system id, the shorter), then by name."""
    time = scores["time_to_train_min"].to_numpy(float)
    org, system = scores["org"].astype(str).to_numpy(), scores["system_id"].astype(str).to_numpy()

    def key(i: int) -> tuple:
        named = f"{org[i]}/{system[i]}"
        return (math.isnan(time[i]), bool(_POWER_PART.search(named)), len(named), named)

    return sorted(members, key=key)


def _mark_twins(scores: pd.DataFrame, groups: dict[tuple, list[int]]) -> None:
    """``same_runs_as`` of every row but the kept one of each round's identical results."""
    twin = scores["same_runs_as"].to_numpy(copy=True)
    rounds = scores["round"].astype(str).to_numpy()
    org, system = scores["org"].astype(str).to_numpy(), scores["system_id"].astype(str).to_numpy()
    for members in groups.values():
        by_round: dict[str, list[int]] = {}
        for i in members:
            by_round.setdefault(rounds[i], []).append(i)
        for same in by_round.values():
            if len(same) < 2:
                continue
            kept, *others = _kept_first(scores, same)
            for i in others:
                twin[i] = f"{org[kept]}/{system[kept]}"
    scores["same_runs_as"] = twin


def _publication_order(name: str) -> tuple:
    """Sort key of the rounds holding one result: published rounds by age, then a user's
    own folders (``my-results (v4.1)``), which publish nothing, then by name, so that a
    folder read beside the round it copies from is never where its results were first
    published, and rounds of one key keep one order whatever the hashing of a set."""
    return (own_folder(name) is not None, round_key(name), str(name))


def _mark_republished(scores: pd.DataFrame, groups: dict[tuple, list[int]]) -> None:
    """``first_round`` and ``republished_in`` of the results found in several rounds."""
    first = scores["first_round"].to_numpy(copy=True)
    later = scores["republished_in"].to_numpy(copy=True)
    rounds = scores["round"].to_numpy()
    for members in groups.values():
        ordered = sorted({rounds[i] for i in members}, key=_publication_order)
        if len(ordered) < 2:
            continue
        for i in members:
            first[i] = ordered[0]
            later[i] = ", ".join(ordered[1:])
    scores["first_round"] = first
    scores["republished_in"] = later


def is_republished(scores: pd.DataFrame) -> pd.Series:
    """Whether each row is a republished copy (its round is not its first)."""
    return scores["first_round"].notna() & (scores["first_round"] != scores["round"])


def is_same_runs_copy(scores: pd.DataFrame) -> pd.Series:
    """Whether each row repeats the runs of another result of its round (a second name)."""
    if "same_runs_as" not in scores:
        return scores["round"].isna() & False
    twin = scores["same_runs_as"]
    return twin.notna() & (twin.astype(str) != "")


def in_a_twin_pair(scores: pd.DataFrame) -> pd.Series:
    """Whether each row is the kept one of results with the same runs in its round (a
    row another of its round and benchmark names in ``same_runs_as``)."""
    import pandas as pd  # lazy: the module is imported without pandas

    if "same_runs_as" not in scores:
        return scores["round"].isna() & False
    named = scores["org"].astype(str) + "/" + scores["system_id"].astype(str)
    kept = scores.loc[is_same_runs_copy(scores), ["round", "benchmark", "same_runs_as"]]
    pairs = set(zip(kept["round"], kept["benchmark"], kept["same_runs_as"], strict=True))
    keys = zip(scores["round"], scores["benchmark"], named, strict=True)
    return pd.Series([key in pairs for key in keys], index=scores.index, dtype=bool)


def is_log_flagged(scores: pd.DataFrame) -> pd.Series:
    """Whether each row's logs contradict their folder (another benchmark or division:
    ``log_flag``): scored as MLCommons scores it, kept out of every analysis."""
    if "log_flag" not in scores:
        return scores["round"].isna() & False
    flag = scores["log_flag"]
    return flag.notna() & (flag.astype(str) != "")


def left_out_of_analyses(scores: pd.DataFrame) -> pd.Series:
    """Whether each row is left out of analyses: a second name of another result's runs
    (:func:`is_same_runs_copy`) or logs that contradict their folder
    (:func:`is_log_flagged`)."""
    return is_same_runs_copy(scores) | is_log_flagged(scores)


def counted_in_analyses(scores: pd.DataFrame) -> pd.DataFrame:
    """``scores`` as analyses count them: each set of runs once, and no result whose logs
    contradict their folder (:func:`left_out_of_analyses`)."""
    return scores[~left_out_of_analyses(scores).to_numpy(bool)]


def runs_counted_once(runs: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """``runs`` without those of the results :func:`left_out_of_analyses`: each run once,
    as :func:`counted_in_analyses` counts each result."""
    import pandas as pd  # lazy: the module is imported without pandas

    left_out = scores[left_out_of_analyses(scores).to_numpy(bool)]
    repeated = pd.MultiIndex.from_frame(runs[KEY].astype(object)).isin(
        pd.MultiIndex.from_frame(left_out[KEY].astype(object))
    )
    return runs[~repeated]
