"""Flags a bench row takes from a one-device run: its own (DDP's one-rank step against the
bare module's step of the same run) and, at N > 1, its N = 1 baseline's.

A speedup, an efficiency and the exposed communication of a run at N > 1 are read
against the N = 1 run of its configuration (``tables.bench.one_device``), so they are only
as trustworthy as both runs: where that N = 1 run is flagged, the N > 1 row is flagged
too, naming the kinds of its baseline's flags, and is left out of findings, break-even
sizes and advice with it. Pure functions over the bench table (``results.bench_table``
applies them once every N = 1 row's own flags are known).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuscale.plausibility import FlagKind, superlinear_flag
from gpuscale.tables import BenchStatus
from gpuscale.tables.bench import one_device

if TYPE_CHECKING:  # pandas only when tables are built: the torchrun workers start without it
    import pandas as pd


def one_rank_flags(frame: pd.DataFrame) -> list[str]:
    """Per row, at N = 1 the flag when the wrapper's (DDP's or FSDP's) one-rank step
    measured faster than the bare module's step of the same run
    (``plausibility.superlinear_flag``), else ``""``."""
    samples = frame["batch_per_device"].astype(float) * frame["accum"].astype(float)
    plain_rate = samples / (frame["plain_step_ms_mean"].astype(float) / 1e3)
    ratio = frame["samples_per_s"].astype(float) / plain_rate
    single = (frame["accelerators"] == 1) & (frame["status"] == BenchStatus.OK)
    # other rows' ratio is NaN, which no flag is said of
    return [
        superlinear_flag(float(r), 1, strategy) or ""
        for r, strategy in zip(ratio.where(single), frame["strategy"], strict=True)
    ]


def baseline_flags(frame: pd.DataFrame) -> list[str]:
    """Per row, at N > 1 the flag when the N = 1 run it is read against is flagged (the
    kinds of that run's flags named), else ``""``."""
    base = one_device(frame, "flag_kinds")
    multi = (frame["accelerators"] > 1) & (frame["status"] == BenchStatus.OK)
    return [
        (
            f"{FlagKind.BASELINE} ({', '.join(kinds)}): the speedup, efficiency and "
            "exposed communication read against it are not trusted"
        )
        if many and isinstance(kinds, tuple) and kinds
        else ""
        for kinds, many in zip(base, multi, strict=True)
    ]


def with_flags(frame: pd.DataFrame, extra: list[str]) -> None:
    """Append each row's reason in ``extra`` (``""``: none) to its ``flags``."""
    frame["flags"] = [
        "; ".join(filter(None, [str(f), x])) for f, x in zip(frame["flags"], extra, strict=True)
    ]
