"""95% bootstrap intervals for time to train, speedup and E'.

MLPerf logs 3-10 runs per system and the score averages those the olympic rule keeps.
For each system, the kept runs' times are resampled with replacement ``n_boot`` times and
each resample's mean (times the RCP scaling factor) is one bootstrap score. Speedup and E'
intervals divide the reference system's bootstrap scores by the system's (independent
draws; a system compared with itself stays exactly 1). Percentile intervals; seeded, so
the same seed gives the same intervals.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuscale.tables import CI_COLUMNS


def _kept_times(runs: pd.DataFrame) -> dict[tuple[str, str, str, str], np.ndarray]:
    kept = runs[runs["kept"].astype(bool)]
    return {
        key: group["time_to_train_min"].to_numpy(float)
        for key, group in kept.groupby(["round", "org", "system_id", "benchmark"])
    }


def bootstrap_intervals(
    table: pd.DataFrame,
    runs: pd.DataFrame,
    *,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> pd.DataFrame:
    """CI columns (``gpuscale.tables.CI_COLUMNS``) for every row of a scaling table.

    NaN where a system has fewer than two kept runs (or its reference has).
    """
    rng = np.random.default_rng(seed)
    times = _kept_times(runs)
    draws: dict[tuple[str, str], np.ndarray] = {}
    for row in table.itertuples(index=False):
        kept = times.get((row.round, row.org, row.system_id, row.benchmark))
        if kept is None or len(kept) < 2:
            continue
        sample = kept[rng.integers(0, len(kept), size=(n_boot, len(kept)))].mean(axis=1)
        draws[(row.org, row.system_id)] = sample * float(row.scaling_factor)
    alpha = (1 - level) / 2
    out = np.full((len(table), len(CI_COLUMNS)), np.nan)
    for pos, row in enumerate(table.itertuples(index=False)):
        own = draws.get((row.org, row.system_id))
        if own is None:
            continue
        out[pos, 0:2] = np.quantile(own, [alpha, 1 - alpha])
        ref = draws.get((row.reference_org, row.reference_system_id))
        if ref is None:
            continue
        speedup = ref / own
        out[pos, 2:4] = np.quantile(speedup, [alpha, 1 - alpha])
        norm = speedup * row.reference_accelerators / row.accelerators
        out[pos, 4:6] = np.quantile(norm, [alpha, 1 - alpha])
    return pd.DataFrame(out, index=table.index, columns=list(CI_COLUMNS))
