"""The report's checks of the advice against the bench: each measured run at N > 1 set
against the advice's prediction of the same configuration only (the same per-device
batch and accumulation at N, against the same one-device run:
``tables.advice.same_configuration``), graded in the bench table's words (flagged, weak
or strong evidence), and the prediction the figure draws under the measured points."""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import pandas as pd

from gpuscale.analysis.bench_scaling import speedups_as_predicted
from gpuscale.analysis.bench_sentences import speedup_over
from gpuscale.quantities import joined, number, of_the
from gpuscale.report.bench_evidence import run_grade
from gpuscale.tables.advice import TOO_WIDE_TO_TEST, same_configuration, wide_factor
from gpuscale.tables.bench import one_device

if TYPE_CHECKING:  # a computed advice's record: the engine is not loaded
    from gpuscale.advice.types import MeasuredCount


def _configuration(batch: int, accum: int, devices: int) -> str:
    """``per-device batch 8, global batch 16`` (with ``accumulation 4`` where any)."""
    of = f", accumulation {accum}" if accum > 1 else ""
    return f"per-device batch {batch}{of}, global batch {batch * accum * devices}"


def _ratio(batch: int, accum: int, base_batch: int, base_accum: int) -> str:
    """``per-device batch 8 against one device at batch 4``: what a speedup is of."""

    def at(b: int, a: int) -> str:
        return f"{b}" + (f" x {a} accumulated" if a > 1 else "")

    one = at(base_batch, base_accum)
    return f"per-device batch {at(batch, accum)} against one device at batch {one}"


def _predicted_at(frames: list[pd.DataFrame | None], n: int) -> str:
    """What the advice's speedups at ``n`` devices are of, or ``none predicted``."""
    said = []
    for frame in frames:
        if frame is None or frame.empty:
            continue
        first = frame.iloc[0]
        for r in frame[frame["accelerators"] == n].itertuples():
            said.append(
                _ratio(
                    int(r.batch_per_device),
                    int(r.accum),
                    int(first["batch_per_device"]),
                    int(first["accum"]),
                )
            )
    return joined(dict.fromkeys(said)) or "none predicted"


@dataclass(frozen=True, slots=True)
class Check:
    """One measured run against the advice: its sentence, whether the run lies outside
    the prediction's interval, and whether it is a flagged run the advice used (either
    is said at the top of the report, before the rest)."""

    line: str
    outside: bool = False
    flagged_used: bool = False

    @property
    def first(self) -> bool:
        return self.outside or self.flagged_used


def _used(d: MeasuredCount | None, allowed: bool) -> str:
    """How the advice treats a flagged run of ``d``'s configuration, read off the one
    record of it (the advice's disagreement: where no unflagged run is there, the row
    rests on the flagged ones), or ``allowed`` (--allow-flagged); "" where left out."""
    if allowed:
        return "used by the advice (--allow-flagged)"
    if d is not None and d.on_flagged_only:
        only = "the only run there" if len(d.runs) == 1 else "every run there flagged"
        return f"the advice rests on it ({only})"
    return ""


def _count_record(found: Sequence[MeasuredCount], r: pd.Series) -> MeasuredCount | None:
    """The advice's record of the runs at ``r``'s count and configuration (its
    disagreements, ``found``), None where it holds none."""
    key = (int(r["accelerators"]), int(r["batch_per_device"]), int(r["accum"]))
    return next((d for d in found if (d.accelerators, d.batch_per_device, d.accum) == key), None)


@dataclass(frozen=True, slots=True)
class ReadRun:
    """A measured run at N > 1 of what the advice is on, as the advice reads it: the
    report's line on the measured speedups, its checks and its summary say it from this
    record (``at``: the run's label in the bench scaling table)."""

    at: Hashable
    configuration: str
    accelerators: int
    speedup: float
    flagged: bool
    use: str = ""  # how the advice uses it where flagged ("" where it leaves it out)

    @property
    def read(self) -> bool:
        """The advice reads it: unflagged, or flagged and used."""
        return not self.flagged or bool(self.use)


def read_runs(
    measured: pd.DataFrame, *, allowed: bool = False, found: Sequence[MeasuredCount] = ()
) -> tuple[ReadRun, ...]:
    """Each run of ``measured`` (the advised runs: ``bench_answer.advised_runs``) at N > 1
    with a speedup, and whether the advice reads it (``allowed``: --allow-flagged; ``found``:
    the advice's disagreements, where a count of flagged runs alone rests on them)."""
    return tuple(
        ReadRun(
            at,
            str(r["configuration"]),
            int(r["accelerators"]),
            float(r["speedup"]),
            bool(r["flagged"]),
            _used(_count_record(found, r), allowed) if r["flagged"] else "",
        )
        for at, r in measured.iterrows()
        if int(r["accelerators"]) > 1 and not pd.isna(r["speedup"])
    )


def checks(
    frames: list[pd.DataFrame | None],
    measured: pd.DataFrame,
    runs: pd.Series,
    scaling: pd.DataFrame,
    *,
    allowed: bool = False,
    found: Sequence[MeasuredCount] = (),
) -> list[Check]:
    """One sentence per measured run (``runs``: their labels; ``measured``: rows of
    ``scaling``) at N > 1 of the advised model: its throughput speedup, graded as the bench
    table grades it (flagged, else weak or strong evidence), against the prediction of the
    same configuration only (``tables.advice.same_configuration`` among ``frames``,
    ``as_throughput``'s: the advice's, then its weak-scaling alternative), or that the
    advice predicts none; an interval wider than ``TOO_WIDE_TO_TEST`` said too wide to
    test the prediction, never that the run lies "inside" it (``allowed``: flagged runs
    were used, ``--allow-flagged``). ``found``: the advice's disagreements, the record of
    which configurations rest on their runs (flagged ones too, where only they are there):
    such a run is held against the model's interval its row replaced, never its own."""
    base_batch = one_device(scaling, "batch_per_device")
    base_accum = one_device(scaling, "accum")
    # each run over the one-device step the prediction models, as the advice reads it
    bases = speedups_as_predicted(scaling)
    lines: list[Check] = []
    for run, (at, r) in zip(runs, measured.iterrows(), strict=True):
        n = int(r["accelerators"])
        speedup = float(bases.at[at, "speedup"])
        if n == 1 or pd.isna(speedup):
            continue
        batch, accum = int(r["batch_per_device"]), int(r["accum"])
        config = _configuration(batch, accum, n)
        d = _count_record(found, r)
        use = _used(d, allowed)
        state = run_grade(scaling, measured.loc[[at]])
        if r["flagged"]:
            state = f"flagged, {use or 'left out of the advice'}: {r['flags']}"
        over = speedup_over(str(bases.at[at, "basis"]))
        said = f"Measured {run} on {n} devices ({config}): {speedup:.2f}x {over} ({state}), "
        used = bool(r["flagged"]) and bool(use)
        base = (int(base_batch[at]), int(base_accum[at]))
        row = same_configuration(frames, n, batch, accum, base)
        if row is None:
            lines.append(
                Check(
                    f"{said}not compared: the advice predicts no run of this configuration "
                    f"(this run: {_ratio(batch, accum, *base)}; the advice at {n} devices: "
                    f"{_predicted_at(frames, n)}), and another configuration's prediction "
                    "tests nothing.",
                    flagged_used=used,
                )
            )
            continue
        low, high = float(row["speedup_low"]), float(row["speedup_high"])
        middle, who = float(row["speedup"]), "the advice"
        if d is not None:  # the row rests on the runs: the model's interval it replaced
            low, high, middle = d.predicted_low, d.predicted_high, d.predicted_speedup
            who = "the model"
        # the bench's ratio, as the advice's record of the count reads it
        # (``decision.measured_counts``): a ratio of two runs beside one of two predictions
        interval = (
            f"{who}'s 80% throughput interval for this configuration ({number(low)}-"
            f"{number(high)}x about its prediction {number(middle)}x; a measured "
            "step has no convergence factor)"
        )
        if not low <= speedup <= high:
            lines.append(
                Check(
                    f"{said}OUTSIDE {interval}: {who} does not match this measurement"
                    + (
                        "; re-measure (more --steps, a quieter machine) before trusting either."
                        if r["flagged"] or r.get("evidence") == "weak"
                        else "."
                    ),
                    outside=True,
                    flagged_used=used,
                )
            )
        elif (wide := wide_factor(low, high)) is not None:
            lines.append(
                Check(
                    f"{said}not a test of {interval}: the interval spans a factor of "
                    f"{number(wide) if math.isfinite(wide) else 'infinity'}, too wide to test the "
                    f"prediction (a test needs one within a factor of {TOO_WIDE_TO_TEST:g}).",
                    flagged_used=used,
                )
            )
        else:
            lines.append(Check(f"{said}inside {interval}.", flagged_used=used))
    return lines


def drawn(
    frames: list[pd.DataFrame | None], measured: pd.DataFrame, scaling: pd.DataFrame
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """The prediction to draw under ``measured`` (rows of ``scaling``), the measured runs
    at N > 1 of its configuration (never another configuration's points over it), and
    what the caption says of those left off: of ``frames`` (the advice's, then its
    weak-scaling alternative), the one predicting most of the runs' configurations."""
    base_batch = one_device(scaling, "batch_per_device")
    base_accum = one_device(scaling, "accum")
    multi = measured[(measured["accelerators"] > 1) & measured["speedup"].notna()]
    best: tuple[int, pd.DataFrame, pd.DataFrame] | None = None
    for frame in frames:
        if frame is None or frame.empty:
            continue
        of = [
            same_configuration(
                [frame],
                int(r["accelerators"]),
                int(r["batch_per_device"]),
                int(r["accum"]),
                (int(base_batch[at]), int(base_accum[at])),
            )
            is not None
            for at, r in multi.iterrows()
        ]
        mine = multi[pd.Series(of, index=multi.index, dtype=bool)]
        if best is None or len(mine) > best[0]:
            best = (len(mine), frame, mine)
    assert best is not None  # the advice's own table is never empty
    count, frame, mine = best
    left = len(multi) - count
    said = (
        f"; {of_the(left, len(multi), 'measured run')} at N > 1 not drawn: of another "
        "configuration than the one predicted (said below)"
        if left
        else ""
    )
    return frame, mine, said
