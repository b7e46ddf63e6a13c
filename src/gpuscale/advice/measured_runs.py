"""Bench runs as the advice reads them: which it may use (``trusted_runs``), a run's measured
speedup (``Measured``), and runs outside the predicted interval of their configuration
(``Disagreement``, with why its trusted runs are those)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

import pandas as pd

# Why the trusted runs are those: every run unflagged (or allowed), or only flagged runs
# measured the count (used, their flags said, to be measured again on a quiet machine).
TRUSTED_UNFLAGGED = "unflagged"


TRUSTED_ALLOWED = "allowed_flagged"  # flagged runs among them, used with --allow-flagged


TRUSTED_FLAGGED_ONLY = "flagged_only"


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
class Disagreement:
    """Runs at ``accelerators`` outside the predicted 80% interval of their configuration.
    Speedups are in throughput (samples/s over one device's), on the advice's one-device
    baseline where the runs record samples/s; ``measured_*``: the trusted runs' median and
    range, what the row now says (the range None from one run: ``no_interval`` says why,
    and the row has no interval); ``predicted_*``: the model's, replaced."""

    accelerators: int
    batch_per_device: int
    accum: int
    measured_speedup: float
    measured_low: float | None
    measured_high: float | None
    predicted_speedup: float
    predicted_low: float
    predicted_high: float
    runs: tuple[float, ...]  # every run's speedup at the count, flagged too
    trusted_runs: tuple[float, ...]  # those the row rests on
    left_out: tuple[float, ...]  # flagged runs not used (trusted unflagged ones exist)
    why: str  # TRUSTED_UNFLAGGED, TRUSTED_ALLOWED or TRUSTED_FLAGGED_ONLY
    bench_speedups: tuple[float, ...]  # every run's against the bench's bare N = 1 step
    flags: tuple[str, ...]  # the flags of the flagged runs, each once
    weak_scaling: bool  # the row is the weak-scaling alternative's (per-device batch kept)
    weak_evidence: str  # what to bench where the trusted runs are weak evidence ("": firm)
    no_interval: str = ""  # why the measured speedup has no interval ("": it has one)

    @property
    def on_flagged_only(self) -> bool:
        """Whether the row rests on flagged runs, no unflagged run there: what the answer
        says of them and what the report says of each run, read off this one record."""
        return self.why == TRUSTED_FLAGGED_ONLY

    def to_dict(self) -> dict[str, object]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def trusted_runs(table: pd.DataFrame) -> pd.DataFrame:
    """The runs of a bench table an advice may use as they are: ``status`` ok, not
    flagged."""
    return table[(table["status"] == "ok") & ~table["flagged"].fillna(False).astype(bool)]


# Why a count resting on a single run has no interval: one value has no spread
ONE_RUN = "one run: its value, no spread to read an interval from"
