"""The fastest system at each accelerator count: the frontier that the knee, the E'
threshold, the crossing of hardware and the study's statements read."""

from __future__ import annotations

import numpy as np
import pandas as pd


def fastest_per_count(table: pd.DataFrame) -> pd.DataFrame:
    """The fastest system at each accelerator count, by increasing count."""
    # the positions sorted, then one take: sorting the frame copies every column
    ids = table["system_id"].astype(str).to_numpy()
    order = np.lexsort(
        (ids, table["time_to_train_min"].to_numpy(float), table["accelerators"].to_numpy(float))
    )
    counts = table["accelerators"].to_numpy(float)[order]
    first = np.ones(len(order), bool)
    first[1:] = counts[1:] != counts[:-1]
    return table.iloc[order[first]].reset_index(drop=True)
