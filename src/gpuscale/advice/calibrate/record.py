"""The calibration of the step model on one bench model, as a record: ``Calibration``
(what the bench measured about it) and ``Shape`` (its step against the batch)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from gpuscale.advice.model.fixed_cost import FixedCost
from gpuscale.advice.model.hardware import DeviceRecord
from gpuscale.advice.model.step import Compute, ModelSpec
from gpuscale.analysis.critical_batch import NoiseScale
from gpuscale.bench.support import Support
from gpuscale.quantities import format_ms, joined, noun_for


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

    def sentence(self) -> str:
        """What was measured, the shape between and beyond, and its left-out error."""
        batches = joined(f"{b:g}" for b, _ in self.points)
        shape = f"{format_ms(self.ms_per_sample)} per sample" + (
            f" from {format_ms(self.fixed_ms)}" if self.fixed_ms > 0 else ""
        )
        if self.knee is not None:
            shape = (
                f"flat at {format_ms(self.floor_ms)} (a launch-bound floor) up to batch "
                f"{self.knee:.0f}, then {shape}"
            )
        errors = (
            "its error on each batch left out: "
            + ", ".join(f"{e:+.0%} at {b:g}" for b, e in self.left_out)
            if self.left_out
            else "too few batches to measure its error on one left out"
        )
        return (
            "Step against the batch: forward + backward measured at per-device "
            f"{noun_for(len(self.points), 'batch')} {batches} (those are used as measured); "
            f"between and beyond them modelled: {shape}; {errors}."
        )


# Runs that share a machine setting: their compute and communication are comparable.
HARDWARE_COLUMNS = ("device", "device_name", "backend", "precision", "tf32", "threads")


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
    memory_note: str = ""  # how max_batch was found
    config_group: str = ""  # the calibrated run's configuration (its batch included)
    measured_steps: pd.DataFrame = field(default_factory=pd.DataFrame)  # N, step_ms
    one_step_ms: float = math.nan  # the N = 1 run's step as it trained (DDP's or FSDP's)
    notes: tuple[str, ...] = ()
