"""The calibration of the step model on one bench model, as a record: ``Calibration``
(what the bench measured about it) and ``Shape`` (its step against the batch)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import pandas as pd

from gpuscale.advice.model.fixed_cost import FixedCost
from gpuscale.advice.model.hardware import DeviceRecord
from gpuscale.advice.model.step import Compute, ModelSpec
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.analysis.critical_batch import NoiseScale
from gpuscale.bench.support import Support


@dataclass(frozen=True, kw_only=True, slots=True)
class Shape:
    """``t(b) = max(floor_ms, fixed_ms + b ms_per_sample)`` fitted to ``points`` ((batch,
    forward + backward ms) measured), and ``left_out``: (batch, relative error) of each
    measured batch predicted from the others."""

    floor_ms: float
    fixed_ms: float
    ms_per_sample: float
    points: tuple[tuple[float, float], ...]
    left_out: tuple[tuple[float, float], ...] = ()

    def ms(self, batch: float) -> float:
        return max(self.floor_ms, self.fixed_ms + batch * self.ms_per_sample)

    @property
    def knee(self) -> float | None:
        """The batch where the rising part meets the floor (None: no floor)."""
        if self.floor_ms <= self.fixed_ms or self.ms_per_sample <= 0:
            return None
        return (self.floor_ms - self.fixed_ms) / self.ms_per_sample

    def finding(self) -> Finding:
        """What was measured (the batches), the shape between and beyond (its floor up to
        the knee, where one; its rate from its intercept, where positive), and its error on
        each batch left out."""
        return Finding.of(
            FindingKind.STEP_SHAPE,
            batches=tuple(b for b, _ in self.points),
            floor_ms=self.floor_ms,
            knee=self.knee,
            ms_per_sample=self.ms_per_sample,
            from_ms=self.fixed_ms if self.fixed_ms > 0 else None,
            left_out=tuple(e for _, e in self.left_out),
            left_out_batches=tuple(b for b, _ in self.left_out),
            errors_measured=bool(self.left_out),
        )


# Runs that share a machine setting: their compute and communication are comparable.
HARDWARE_COLUMNS = ("device", "device_name", "backend", "precision", "tf32", "threads")
T = TypeVar("T")


def cell(row: pd.Series, column: str, cast: Callable[..., T], default: T | None = None) -> T | None:
    """A bench row's ``column`` as ``cast`` makes it; ``default`` where the row has none
    (the column missing, or NaN)."""
    value = row.get(column)
    if pd.isna(value):
        return default
    return cast(value)


@dataclass(frozen=True, kw_only=True, slots=True)
class Calibration:
    """What the bench measured about one model, ready for the step model."""

    name: str
    model: ModelSpec
    compute: Compute
    batch: int
    accum: int = 1  # micro-steps per optimizer step the run took (``batch`` each)
    strategy: str = "ddp"
    bucket_mb: float = 25.0
    device: str | None = None
    device_name: str | None = None
    device_record: DeviceRecord  # the device's catalogue record (``model.hardware``)
    threads: int | None = None  # threads per process of the N = 1 run (CPU); None: not recorded
    overlap: float | None = None  # measured share hidden; None: not measured
    comm_scale: float | None = None  # measured / predicted communication; None: unknown
    comm_support: Support | None = None  # the runs comm_scale was read from
    # the N > 1 runs of every model of the configuration, the family, its own: where the
    # communication scale is read, on the advice's network (``read_comm``)
    comm_levels: tuple[pd.DataFrame, ...] = ()
    bench_model: str = ""  # the bench model whose runs these are (``name`` may be another's)
    noise: NoiseScale | None = None
    fixed: FixedCost | None = None  # the fixed per-step cost and where it came from
    shape: Shape | None = None  # the step against the batch, fitted to measured batches
    max_batch: int | None = None  # the largest per-device batch the memory allows
    memory_note: Finding | None = None  # how max_batch was found
    config_group: str = ""  # the calibrated run's configuration (its batch included)
    measured_steps: pd.DataFrame = field(default_factory=pd.DataFrame)  # N, step_ms
    one_step_ms: float = math.nan  # the N = 1 run's step as it trained (DDP's or FSDP's)
    # FSDP's own work in that step (ms), its synchronised minus no-sync step or its step less
    # the plain one (``bench.table.fsdp_own``); 0 for DDP
    one_step_own_ms: float = 0.0
    notes: tuple[str | Finding, ...] = ()
