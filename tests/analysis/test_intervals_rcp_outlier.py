"""A reference convergence point's run that cannot be true is in no interval's pool:
ruleset 4.1.0 lists GPT-3 at a global batch of 3,072 converging in 13,790,871,552 tokens
(2,192 steps) beside six runs of 192-200 steps (1.21e9-1.26e9 tokens), and v4.1's two
Oracle results, the only ones at that batch, draw their convergence from that pool. The
run is left out where the RCP files are read (``mlperf.rcp.rcp_runs``,
tests/mlperf/test_rcp_left_out.py); the intervals read the runs from there."""

from __future__ import annotations

import numpy as np

from gpuscale.analysis.metrics import scaling_table
from gpuscale.analysis.score_intervals import _rcp_groups, bootstrap_intervals
from gpuscale.mlperf import load_round

LOW, HIGH = "time_to_train_min_ci_low", "time_to_train_min_ci_high"


def test_the_pool_at_3072_holds_the_six_runs_the_reader_keeps() -> None:
    groups = dict(_rcp_groups("v4.1", "gpt3"))
    at_3072 = sorted(np.rint(np.exp(groups[3072.0])))  # of the file's seven
    assert at_3072 == [1_207_959_552] * 5 + [1_258_291_200]
    assert len(groups[2048.0]) == 7  # a batch with no such run keeps every run


def test_oracle_s_gpt3_intervals_are_its_runs_spread_not_eleven_fold() -> None:
    """Oracle's 3,072-H100 runs took 11.6-12.2 min (score 12.09): its 95% interval was
    1.78-40.8 min, wider than GPT-3's whole range of results on H100s that round."""
    tables = load_round("v4.1")
    table = scaling_table(tables.scores, "gpt3")
    ci = bootstrap_intervals(table, tables.runs, scores=tables.scores, n_boot=400, seed=0)
    ci = ci.set_index(table["system_id"])
    times = table.set_index("system_id")["time_to_train_min"]
    for system in ("3072xBM.GPU.H100.8", "1536xBM.GPU.H100.8"):
        low, high = ci.loc[system, [LOW, HIGH]]
        assert 0.85 * times[system] < low <= times[system] <= high < 1.15 * times[system]
