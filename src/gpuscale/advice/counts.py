"""Which device counts the search tried, and why a count asked for has no row: a global
batch kept (strong scaling) that does not split into whole per-device batches over it
(64 samples over 3 devices), within the accumulation allowed and the largest batch that
fits. A walk's ``--max-devices 3`` showed N = 1 and 2 and dropped 3 without a word."""

from __future__ import annotations

from typing import Any

import pandas as pd


def dropped_counts(inputs: Any, frame: pd.DataFrame) -> str:
    """A sentence naming the counts searched and each one without a row and why; "" when
    every count searched has its row."""
    searched = inputs.device_counts()
    shown = set(frame["accelerators"].astype(int))
    missing = [n for n in searched if n not in shown]
    if not missing:
        return ""
    kept = inputs.kept_global_batch
    names = ", ".join(map(str, missing))
    why = (
        f"the global batch {kept} kept at every count does not split over "
        f"{'it' if len(missing) == 1 else 'them'} into whole per-device batches of at "
        f"most {inputs.largest_batch} with at most {inputs.max_accum} accumulation steps "
        f"(give a --global-batch divisible by {names}, or --scaling weak)"
        if kept is not None
        else "no per-device batch and accumulation fits"
    )
    return f"Device counts searched: {', '.join(map(str, searched))}; {names} not shown: {why}."
