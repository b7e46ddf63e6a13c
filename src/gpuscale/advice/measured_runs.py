"""Bench runs as the advice reads them: a run's measured speedup (``Measured``), the runs at
one count against their prediction (``MeasuredCount``, a disagreement where outside its
interval)."""

from __future__ import annotations

from dataclasses import dataclass

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
    prediction once (``search.decide.measured_counts``): every view reads it here. Where
    the median lies outside the interval it is a disagreement: the row rests on it."""

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

    def disagreement_dict(self) -> dict[str, object]:
        """``-f json``'s ``disagreements``: ``measured``, what the row now says (the runs'
        range as its interval, none from one run); ``predicted``, the model's, replaced."""
        return {
            "accelerators": self.accelerators,
            "batch_per_device": self.batch_per_device,
            "accum": self.accum,
            "weak_scaling": self.weak_scaling,
            "measured": {
                "speedup": self.measured_speedup,
                "speedup_low": self.measured_low,
                "speedup_high": self.measured_high,
                "no_interval": self.no_interval,
            },
            "predicted": {
                "speedup": self.predicted_speedup,
                "speedup_low": self.predicted_low,
                "speedup_high": self.predicted_high,
            },
            "evidence": {
                "runs": self.speedups,
                "trusted_runs": tuple(self.of(self.used)),
                "left_out": tuple(self.of(self.left_out)),
                "why": self.why,
                "bench_speedups": self.speedups,
                "flags": self.flags,
                "weak_evidence": self.weak_evidence,
            },
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

    @property
    def measured_low(self) -> float | None:
        """The used runs' smallest speedup (None from one run: no interval)."""
        return None if len(self.used) == 1 else min(self.of(self.used))

    @property
    def measured_high(self) -> float | None:
        """The used runs' largest speedup (None from one run: no interval)."""
        return None if len(self.used) == 1 else max(self.of(self.used))

    @property
    def no_interval(self) -> str:
        """Why the measured speedup has no interval ("": it has one)."""
        return ONE_RUN if len(self.used) == 1 else ""

    @property
    def why(self) -> str:
        """TRUSTED_UNFLAGGED, TRUSTED_ALLOWED or TRUSTED_FLAGGED_ONLY."""
        if any(m.allowed for m in self.trusted):
            return TRUSTED_ALLOWED
        return TRUSTED_UNFLAGGED if self.trusted else TRUSTED_FLAGGED_ONLY

    @property
    def on_flagged_only(self) -> bool:
        """Whether the count rests on flagged runs, no unflagged run there."""
        return not self.trusted

    @property
    def flags(self) -> tuple[str, ...]:
        """The flags of the flagged runs, each once."""
        return tuple(dict.fromkeys(m.flags for m in self.runs if m.flagged and m.flags))

    @property
    def weak_evidence(self) -> str:
        """What to bench where the runs used are weak evidence ("": firm)."""
        return next((m.weak_remedy for m in self.used if m.weak_remedy), "")


def trusted_runs(table: pd.DataFrame) -> pd.DataFrame:
    """The runs of a bench table that are ok and not flagged."""
    return table[(table["status"] == "ok") & ~table["flagged"].fillna(False).astype(bool)]
