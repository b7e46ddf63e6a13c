"""A path read as a bundled round, held against that round's bundled tables: a copy where a
result both hold scores otherwise (a log renamed, edited or left out) holds no published
score, so it is listed as the user's own folder (``my copy (v4.1)``,
``tables.workloads.own_label``), never under the round's own name, with a warning of how
many results differ and the first of them. A copy of part of the round, or one adding
results of its own, changes no published score: it stays the round."""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscale.quantities import counted

# A result is one system's score on one benchmark in its round.
RESULT_KEY = ["org", "system_id", "benchmark"]


def differences(scores: pd.DataFrame, published: pd.DataFrame) -> pd.DataFrame:
    """The results both ``scores`` and ``published`` (one round each) hold whose time to
    train is not the same (to 1e-9 relative; scored in one only): ``RESULT_KEY``, the
    minutes read (``time_to_train_min``; NaN: not scored) and published
    (``published_min``)."""
    minutes = ["time_to_train_min"]
    both = scores[RESULT_KEY + minutes].merge(
        published[RESULT_KEY + minutes].rename(columns={"time_to_train_min": "published_min"}),
        on=RESULT_KEY,
    )
    read, kept = both["time_to_train_min"], both["published_min"]
    same = (read.isna() & kept.isna()) | np.isclose(read, kept, rtol=1e-9, atol=0.0)
    return both.loc[~same, [*RESULT_KEY, "time_to_train_min", "published_min"]]


def not_as_published(differing: pd.DataFrame, results: int, round_name: str) -> str:
    """The warning on a copy of ``round_name`` whose ``differing`` results
    (``differences``), of the ``results`` it shares with the round, are not as published:
    how many, and the first."""
    first = differing.iloc[0]
    where = f"{first['org']}/{first['system_id']} {first['benchmark']}"

    def minutes(value: float) -> str:
        return "unscored" if pd.isna(value) else f"{value:.4g} min"

    read, kept = minutes(first["time_to_train_min"]), minutes(first["published_min"])
    said = f"{where}: {read}, published {kept}"
    return (
        f"{counted(len(differing), 'result')} of the {results:,} it shares with the published "
        f"{round_name} score otherwise ({said}): listed as your own folder, scored by the "
        "official rule"
    )
