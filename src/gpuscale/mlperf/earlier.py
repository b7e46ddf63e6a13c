"""Where each loaded result was first published, looking at the bundled rounds too.

``RoundTables.concat`` and ``bundled.load_round`` mark republished results over the rounds
loaded (``gpuscale.tables.republished``): a report of v4.1 alone sees NVIDIA's BERT
``eos_n434`` as a v4.1 result, though the same runs were published in v3.1 and again in
v4.0 and v4.1. :func:`first_published` marks the loaded results against every bundled
round older than the newest loaded one as well (the same test: the same workload, count and
runs to the millisecond), without changing the tables the analysis reads: a round is
analysed as MLCommons published it. What a command shows of ``first_round`` and
``republished_in`` (``gpuscale scores``, ``analyze -f csv``/``json``, ``dataset``, the
report) is this marking: :func:`published` gives the tables a command shows.
"""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from gpuscale.mlperf.bundled import DATA_DIR, bundled_rounds
from gpuscale.tables import RoundTables, round_key
from gpuscale.tables.republished import KEY, mark_copies

SCORE_COLUMNS = [*KEY, "workload", "accelerators", "time_to_train_min", "energy_kj"]
RUN_COLUMNS = [*KEY, "run_start_ms", "run_stop_ms"]


def _bundled(rounds: list[str], name: str, columns: list[str]) -> pd.DataFrame:
    frame = pd.read_parquet(DATA_DIR / f"{name}.parquet", columns=columns)
    return frame[frame["round"].isin(rounds)]


def first_published(tables: RoundTables) -> pd.DataFrame:
    """``tables.scores``' rows (same index) with ``first_round`` and ``republished_in``
    marked over the loaded rounds and the bundled rounds before the newest loaded one
    (a bundled round also loaded is not read twice)."""
    scores = tables.scores
    if scores.empty:
        return scores.assign(first_round=pd.Series(dtype=object), republished_in="")
    loaded = {str(r) for r in scores["round"].unique()}
    newest = round_key(max(loaded, key=round_key))
    older = [r for r in bundled_rounds() if r not in loaded and round_key(r) < newest]
    mine = scores.reindex(columns=SCORE_COLUMNS)
    if not older:
        marked = mark_copies(mine, tables.runs)
        return scores.assign(
            first_round=marked["first_round"].to_numpy(),
            republished_in=marked["republished_in"].to_numpy(),
        )
    others = _bundled(older, "scores", SCORE_COLUMNS)
    both = pd.concat([mine, others], ignore_index=True)
    runs = pd.concat(
        [tables.runs.reindex(columns=RUN_COLUMNS), _bundled(older, "runs", RUN_COLUMNS)],
        ignore_index=True,
    )
    marked = mark_copies(both, runs).iloc[: len(scores)]
    return scores.assign(
        first_round=marked["first_round"].to_numpy(),
        republished_in=marked["republished_in"].to_numpy(),
    )


def published(tables: RoundTables) -> RoundTables:
    """``tables`` as a command shows them: ``scores`` with :func:`first_published`'s
    ``first_round`` and ``republished_in`` (for output only; the analyses read the
    tables as loaded, marked over the loaded rounds)."""
    return replace(tables, scores=first_published(tables))
