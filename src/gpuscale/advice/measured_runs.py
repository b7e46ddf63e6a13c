"""Bench runs as the advice reads them: a run's measured speedup (``Measured``), the runs at
one count against their prediction (``MeasuredCount``), those outside its interval."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pandas as pd

# Why the trusted runs are those: every run unflagged, flagged runs among them used with
# --allow-flagged, or only flagged runs measured the count (used, their flags said, to be
# measured again on a quiet machine).
TRUSTED_UNFLAGGED = "unflagged"
TRUSTED_ALLOWED = "allowed_flagged"
TRUSTED_FLAGGED_ONLY = "flagged_only"
# Why a count resting on a single run has no interval: one value has no spread
ONE_RUN = "one run: its value, no spread to read an interval from"


@dataclass(frozen=True, slots=True)
class Measured:
    """A bench run's throughput speedup at ``devices`` (against its one-device run)."""

    devices: int
    speedup: float
    flagged: bool
    batch_per_device: int
    allowed: bool = False  # flagged, yet used (--allow-flagged)
    accum: int = 1
    # (per-device batch, accumulation) of the N = 1 run the speedup is against (None:
    # the run's own, as a weak-scaling bench keeps them)
    base: tuple[int, int] | None = None
    # where it or its N = 1 run is weak evidence (bench.evidence): what to bench for a
    # strong one ("" where both are strong)
    weak_remedy: str = ""
    samples_per_s: float = float("nan")  # the run's, all devices (NaN: not known)
    flags: str = ""  # the bench's flags of the run ("" where none)


@dataclass(frozen=True, slots=True)
class MeasuredCount:
    """The runs at one count in a configuration the advice predicts, set against that
    prediction once (``search.reconcile.measured_counts``): every view reads it here."""

    accelerators: int
    batch_per_device: int
    accum: int
    base: tuple[int, int]  # (per-device batch, accumulation) of the N = 1 run read against
    predicted_speedup: float
    predicted_low: float
    predicted_high: float
    weak_scaling: bool  # the prediction is the weak-scaling alternative's
    runs: tuple[Measured, ...]  # every run at the count in that configuration
    trusted: tuple[Measured, ...]  # unflagged, or flagged and allowed
    speedups: tuple[float, ...]  # of each of ``runs``, against its N = 1 run
    measured_speedup: float  # the median of the runs used
    inside: bool  # within the predicted 80% interval

    def of(self, runs: tuple[Measured, ...]) -> list[float]:
        return [v for m, v in zip(self.runs, self.speedups, strict=True) if m in runs]

    def to_dict(self) -> dict[str, object]:
        """``-f json``'s ``measured``: the runs as their speedups."""
        return {
            "accelerators": self.accelerators,
            "batch_per_device": self.batch_per_device,
            "accum": self.accum,
            "measured_speedup": self.measured_speedup,
            "speedups": list(self.speedups),
            "trusted_runs": self.of(self.trusted),
            "predicted_speedup": self.predicted_speedup,
            "predicted_low": self.predicted_low,
            "predicted_high": self.predicted_high,
            "weak_scaling": self.weak_scaling,
            "inside": self.inside,
        }

    @property
    def used(self) -> tuple[Measured, ...]:
        """The trusted runs, else (all flagged) every run."""
        return self.trusted or self.runs

    @property
    def left_out(self) -> tuple[Measured, ...]:
        """Flagged runs not used (none where only flagged runs are there)."""
        if not self.trusted:
            return ()
        return tuple(m for m in self.runs if m.flagged and not m.allowed)


@dataclass(frozen=True, slots=True)
class SpeedupInterval:
    """A predicted throughput speedup (x one device's) and its 80% interval."""

    speedup: float
    speedup_low: float
    speedup_high: float


@dataclass(frozen=True, slots=True)
class MeasuredSpeedup:
    """The trusted runs' median throughput speedup (x one device's) and their range (None
    from one run)."""

    speedup: float
    speedup_low: float | None
    speedup_high: float | None
    no_interval: str = ""  # why the measured speedup has no interval ("": it has one)


@dataclass(frozen=True, slots=True)
class RunsRead:
    """The runs at a disagreeing count, each a throughput speedup (x)."""

    runs: tuple[float, ...]  # every run's speedup at the count, flagged too
    trusted_runs: tuple[float, ...]  # those the row rests on
    left_out: tuple[float, ...]  # flagged runs not used (trusted unflagged ones exist)
    why: str  # TRUSTED_UNFLAGGED, TRUSTED_ALLOWED or TRUSTED_FLAGGED_ONLY
    bench_speedups: tuple[float, ...]  # every run's against the bench's bare N = 1 step
    flags: tuple[str, ...]  # the flags of the flagged runs, each once
    weak_evidence: str  # what to bench where the trusted runs are weak evidence ("": firm)


@dataclass(frozen=True, slots=True)
class Disagreement:
    """Runs outside the predicted 80% interval of their configuration: ``measured``, what
    the row now says (throughput, on the advice's one-device baseline where the runs record
    samples/s); ``predicted``, the model's, replaced."""

    accelerators: int
    batch_per_device: int
    accum: int
    weak_scaling: bool
    measured: MeasuredSpeedup
    predicted: SpeedupInterval
    evidence: RunsRead

    @property
    def on_flagged_only(self) -> bool:
        """Whether the row rests on flagged runs, no unflagged run there."""
        return self.evidence.why == TRUSTED_FLAGGED_ONLY

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def trusted_runs(table: pd.DataFrame) -> pd.DataFrame:
    """The runs of a bench table that are ok and not flagged."""
    return table[(table["status"] == "ok") & ~table["flagged"].fillna(False).astype(bool)]
