"""Scaling of the user's own bench runs: speedup and efficiency per model, break-even size.

For each model and configuration group (the same run at every device count), against the
group's one-device run: ``speedup = samples_per_s(N) / samples_per_s(1)`` (throughput, so
weak and strong scaling read the same way) and ``efficiency = speedup / N``. An efficiency
that cannot be true (super-linear, see ``gpuscale.plausibility``) flags the row. The
**break-even model size** at N is where the speedup crosses 1: log-linear interpolation
in parameters between the largest model slower than one device and the next larger
model that is not, over unflagged rows.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gpuscale.plausibility import superlinear_flag
from gpuscale.tables import BenchStatus


def bench_scaling(table: pd.DataFrame) -> pd.DataFrame:
    """The ``ok`` rows of a bench table with ``speedup`` and ``efficiency`` columns
    (NaN where the group has no one-device run), flags updated, sorted by model size
    and device count."""
    ok = table[table["status"] == BenchStatus.OK].copy()
    if ok.empty:
        return ok.assign(speedup=pd.Series(dtype=float), efficiency=pd.Series(dtype=float))
    single = ok[ok["accelerators"] == 1].drop_duplicates("config_group", keep="last")
    base = ok["config_group"].map(single.set_index("config_group")["samples_per_s"])
    ok["speedup"] = ok["samples_per_s"] / base
    ok["efficiency"] = ok["speedup"] / ok["accelerators"]
    extra = [
        superlinear_flag(e, int(n))
        for e, n in zip(ok["efficiency"], ok["accelerators"], strict=True)
    ]
    ok["flags"] = ["; ".join(filter(None, [f, x])) for f, x in zip(ok["flags"], extra, strict=True)]
    ok["flagged"] = ok["flags"].str.len() > 0
    return ok.sort_values(["params", "model", "accelerators"]).reset_index(drop=True)


def trusted(scaling: pd.DataFrame) -> pd.DataFrame:
    """The rows without flags: what advice and findings may use."""
    return scaling[~scaling["flagged"].astype(bool)]


def break_even_params(
    scaling: pd.DataFrame, accelerators: int = 2, speedup: float = 1.0
) -> float | None:
    """Parameters at which the speedup on ``accelerators`` devices reaches ``speedup``.

    None when no model crosses it (all faster, all slower, or no such runs). With several
    families the smallest crossing is returned. Flagged rows are left out.
    """
    rows = trusted(scaling)
    rows = rows[rows["accelerators"] == accelerators].dropna(subset=["speedup"])
    crossings = []
    for _, family in rows.groupby("family"):
        ordered = family.sort_values("params")
        params = ordered["params"].to_numpy(float)
        values = ordered["speedup"].to_numpy(float)
        for i in range(1, len(params)):
            if values[i - 1] < speedup <= values[i]:
                fraction = (speedup - values[i - 1]) / (values[i] - values[i - 1])
                log_p = math.log10(params[i - 1]) + fraction * (
                    math.log10(params[i]) - math.log10(params[i - 1])
                )
                crossings.append(10**log_p)
                break
    return float(np.min(crossings)) if crossings else None
