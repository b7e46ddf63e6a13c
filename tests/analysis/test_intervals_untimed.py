"""A counted run whose logged time cannot be true (the runs' ``time_flag``: v0.7 Google
tpu-v3-8192-TF SSD logs a run_start before its own initialisation, 922 min beside 0.46)
keeps the official score's part but no replicate draws its time: the interval stays the
size its other runs give, and the row says how many such runs it had."""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.metrics import scaling_table
from gpuscale.analysis.score_intervals import bootstrap_intervals

from .tables import scores
from .test_intervals import runs_of

LOW, HIGH = "time_to_train_min_ci_low", "time_to_train_min_ci_high"
PACE = (1.0, 1.01, 0.99, 1.005, 0.995)


def _runs(flag: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``a`` at 8 (five runs near 10 min, the fifth logged at 2,000 min) and ``b`` at 16
    (five near 6 min); ``flag`` is the fifth run of ``a``'s time_flag."""
    frame = scores([("a", "A100", 8, 10.0), ("b", "A100", 16, 6.0)])
    runs = runs_of(
        {
            "a": [(10.0 * p, 40.0) for p in PACE[:4]] + [(2000.0, 40.0)],
            "b": [(6.0 * p, 40.0) for p in PACE],
        }
    )
    runs["time_flag"] = ""
    runs.loc[4, "time_flag"] = flag
    return scaling_table(frame, "bert"), runs


def test_a_run_whose_time_cannot_be_true_is_drawn_in_no_replicate() -> None:
    table, runs = _runs("run_start precedes init_start and init_stop precedes run_stop")
    ci = bootstrap_intervals(table, runs, n_boot=500, seed=3).set_index(table["system_id"])
    assert ci["ci_untimed_runs"].tolist() == [1, 0]
    low, high = ci.loc["a", [LOW, HIGH]]
    assert 9.0 < low <= 10.0 <= high < 11.0  # its four other runs span 9.9-10.1 min
    assert 0.5 < ci.loc["a", "speedup_ci_low"] <= ci.loc["a", "speedup_ci_high"] < 1.5


def test_unflagged_the_same_run_stretches_the_interval() -> None:
    """The same runs without the flag: the 2,000 min run is drawn (two of it in a
    replicate put it in the olympic average), and the interval reaches far above."""
    table, runs = _runs("")
    ci = bootstrap_intervals(table, runs, n_boot=500, seed=3).set_index(table["system_id"])
    assert ci["ci_untimed_runs"].tolist() == [0, 0]
    assert ci.loc["a", HIGH] > 100.0


def test_a_runs_table_from_before_the_column_draws_every_run() -> None:
    table, runs = _runs("")
    old = bootstrap_intervals(table, runs.drop(columns="time_flag"), n_boot=300, seed=3)
    new = bootstrap_intervals(table, runs, n_boot=300, seed=3)
    pd.testing.assert_frame_equal(old, new)
