"""The recommendation as one structured :class:`Decision`, read off the predictions.

Everything the advice says (its sentences, its JSON) is rendered from the Decision, and
the Decision from the predictions table, so they cannot contradict each other:

* ``chosen``: the fastest count to a trained model whose efficiency reaches the target
  **and** whose 80% interval of the speedup lies above 1 (``held_back``: the faster count
  whose interval includes "no gain"); one device whenever an input cannot be true (an
  ``IMPLAUSIBLE`` warning).
* ``focus``: the smallest count above the chosen (the largest predicted when there is
  none); the dominant term, the cap and what would change it are read at this one count.
* ``limit.dominant_term``: the largest overhead of the step at ``focus`` (``OVERHEADS``),
  or ``compute`` when the throughput efficiency there is >= 95%.
* ``limit.cap``: which factor of the speedup loses more at ``focus`` (log scale):
  ``overheads`` (the throughput efficiency), ``convergence`` (the samples needed grow
  with the global batch), ``none`` (both within 5%); where no count above the largest
  predicted remains, why the search stopped (``stopped_by``).

Measurement and prediction reconciled: a count the bench measured in the configuration
predicted whose trusted runs fall outside the 80% interval (``disagreements``) rests on
them (``applied``: their median, their spread as the interval). Trusted: the unflagged
runs (flagged ones with --allow-flagged); where every run is flagged, those. Counts
predicted faster than the fastest MLPerf system allows (``below_mlperf``) are an input
that cannot be true.

The 80% intervals come with the predictions (``predictions.predictions``); the count at
each end of every assumed term's range: ``recommend.read``.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

import pandas as pd

from gpuscale.advice.explain.findings import said
from gpuscale.advice.measured_runs import MeasuredCount
from gpuscale.advice.records import Chosen, Decision, Focus, HeldBack, Limit
from gpuscale.advice.types import (
    ONE_RUN,
    STOPPED,
    TRUSTED_ALLOWED,
    TRUSTED_FLAGGED_ONLY,
    TRUSTED_UNFLAGGED,
    Disagreement,
    Finding,
    FindingKind,
    Measured,
    MeasuredSpeedup,
    RunsRead,
    SpeedupInterval,
    TermId,
    maybe,
)
from gpuscale.tables.advice import NOT_POSITIVE, as_throughput, same_configuration

# The prediction columns that scale with the step's throughput (x measured / predicted)
# and those that scale with its time (/ the same factor).
WITH_THROUGHPUT = ("samples_per_s", "speedup", "efficiency", "throughput_efficiency")
WITH_TIME = ("step_ms", "time_to_train_min", "accelerator_hours", "cost", "energy_kwh")
# the step's overheads, as the prediction columns that hold them
OVERHEADS = (
    TermId.FIXED,
    TermId.WAIT,
    TermId.DDP,
    TermId.BANDWIDTH,
    TermId.LATENCY,
    TermId.UNEXPLAINED,
)
NEGLIGIBLE = 0.95  # a factor above this loses under 5%
# why a predicted row cannot be true, as the search's columns: its time to train not
# positive and finite; its speedup where above linear (NaN where not)
FLAGGED = ("not_positive", "above_linear")


def _median(values: Sequence[float]) -> float:
    return float(pd.Series(list(values), dtype=float).median())


def measured_counts(
    predictions: pd.DataFrame,
    measured: Sequence[Measured],
    alternative: pd.DataFrame | None = None,
) -> tuple[MeasuredCount, ...]:
    """Each count the bench measured in a configuration predicted
    (``tables.advice.same_configuration``: in the ``predictions``, else the weak-scaling
    ``alternative``), its runs set against that prediction once: every run's throughput
    speedup as ``analyze --bench`` reads it, the median of those used and whether it lies
    inside the predicted 80% interval."""
    frames = [maybe(as_throughput, f) for f in (predictions, alternative)]
    groups: dict[tuple, list[Measured]] = {}
    for m in measured:
        key = (m.devices, m.batch_per_device, m.accum, m.base or (m.batch_per_device, m.accum))
        groups.setdefault(key, []).append(m)
    found = []
    for (devices, batch, accum, base), runs in groups.items():
        row = same_configuration(frames, devices, batch, accum, base)
        if row is None:
            continue
        trusted = tuple(m for m in runs if not m.flagged or m.allowed)
        speedups = tuple(m.speedup for m in runs)
        used = trusted or tuple(runs)
        speedup = _median([v for m, v in zip(runs, speedups, strict=True) if m in used])
        low, high = float(row["speedup_low"]), float(row["speedup_high"])
        found.append(
            MeasuredCount(
                accelerators=devices,
                batch_per_device=batch,
                accum=accum,
                base=tuple(base),
                predicted_speedup=float(row["speedup"]),
                predicted_low=low,
                predicted_high=high,
                weak_scaling=same_configuration(frames[:1], devices, batch, accum, base) is None,
                runs=tuple(runs),
                trusted=trusted,
                speedups=speedups,
                measured_speedup=speedup,
                inside=low <= speedup <= high,
            )
        )
    return tuple(sorted(found, key=lambda c: c.accelerators))


def disagreements(counts: Sequence[MeasuredCount]) -> tuple[Disagreement, ...]:
    """Each measured count (:func:`measured_counts`) whose median lies outside the
    predicted 80% interval: the count's row then rests on its runs (:func:`applied`)."""
    found = []
    for c in counts:
        if c.inside:
            continue
        why = TRUSTED_UNFLAGGED if c.trusted else TRUSTED_FLAGGED_ONLY
        why = TRUSTED_ALLOWED if any(m.allowed for m in c.trusted) else why
        values = c.of(c.used)
        # the runs' range; a single run's value is no interval
        ends: tuple[float | None, float | None] = (min(values), max(values))
        no_interval = ""
        if len(values) == 1:
            ends, no_interval = (None, None), ONE_RUN
        flagged = [m for m in c.runs if m.flagged]
        found.append(
            Disagreement(
                accelerators=c.accelerators,
                batch_per_device=c.batch_per_device,
                accum=c.accum,
                weak_scaling=c.weak_scaling,
                measured=MeasuredSpeedup(c.measured_speedup, ends[0], ends[1], no_interval),
                predicted=SpeedupInterval(c.predicted_speedup, c.predicted_low, c.predicted_high),
                evidence=RunsRead(
                    runs=c.speedups,
                    trusted_runs=tuple(values),
                    left_out=tuple(c.of(c.left_out)),
                    why=why,
                    bench_speedups=c.speedups,
                    flags=tuple(dict.fromkeys(m.flags for m in flagged if m.flags)),
                    weak_evidence=next((m.weak_remedy for m in c.used if m.weak_remedy), ""),
                ),
            )
        )
    return tuple(found)


def plausible(frame: pd.DataFrame) -> pd.Series:
    """The rows of a predictions table none of whose ``FLAGGED`` columns is set."""
    return ~frame["not_positive"].astype(bool) & frame["above_linear"].isna()


def overheads(row: pd.Series) -> dict[TermId, float]:
    """The step's overheads (ms): the fixed cost not spread (``fixed_excess_ms``),
    waiting, DDP's copies, and the exposed communication split into bandwidth and
    latency in their proportion of the whole."""
    exposed = float(row["exposed_comm_ms"])
    share = float(row["latency_ms"] / row["comm_ms"]) if row["comm_ms"] > 0 else 0.0
    return {
        TermId.FIXED: float(row.get("fixed_excess_ms", 0.0)),
        TermId.WAIT: float(row["wait_ms"]),
        TermId.DDP: float(row["ddp_ms"]),
        TermId.BANDWIDTH: exposed * (1 - share),
        TermId.LATENCY: exposed * share,
        # where the step rests on a measurement: what the model's terms leave of it
        TermId.UNEXPLAINED: float(row.get("unexplained_ms", 0.0)),
    }


def dominant_term(row: pd.Series) -> str:
    """The largest overhead, or ``compute`` at >= 95% throughput efficiency (or N = 1)."""
    if row["accelerators"] < 2 or row["throughput_efficiency"] >= NEGLIGIBLE:
        return "compute"
    parts = overheads(row)
    return max(parts, key=parts.get)


def cap_at(row: pd.Series) -> str:
    """Which factor of the speedup loses more at a count (log scale); ``none`` when both
    lose under 5%."""
    losses = {
        "overheads": math.log(min(1.0, row["throughput_efficiency"])),
        "convergence": math.log(min(1.0, row["convergence_factor"])),
    }
    worst = min(losses, key=losses.get)
    return worst if losses[worst] < math.log(NEGLIGIBLE) else "none"


def stopped_by(frame: pd.DataFrame, largest: int, searched: Collection[int]) -> str:
    """Why no count above ``largest`` (the largest trusted) has a row: ``batch`` where a
    count ``searched`` above it has none (the global batch kept does not split into whole
    per-device batches over it), ``flagged`` where those above failed a plausibility check,
    else ``devices`` (``largest`` is the most allowed)."""
    above = {int(n) for n in searched if n > largest}
    if above - set(frame["accelerators"].astype(int)):
        return "batch"
    return "flagged" if above else "devices"


def _held(row: pd.Series) -> HeldBack:
    """The count its interval holds back (``row``) and that interval's low end."""
    return HeldBack(int(row["accelerators"]), float(row["speedup_low"]))


def decide(
    frame: pd.DataFrame,
    target_efficiency: float,
    warnings: tuple[str | Finding, ...] = (),
    refused: bool = False,
    searched: Collection[int] = (),
    fits_from: int = 1,
) -> Decision:
    """The Decision of a predictions table (flagged rows left out, ``plausible``);
    ``refused``: an input cannot be true (an IMPLAUSIBLE warning among ``warnings``);
    ``searched``: the device counts searched (``stopped_by``); ``fits_from``: the smallest
    count whose devices hold the model (``advice.memory``), standing where one device would;
    where none predicted does, nothing is advised (``Decision.holds``)."""
    trusted = frame[plausible(frame)].reset_index(drop=True)
    if trusted.empty:  # one device's speedup is 1: only its time can fail
        raise ValueError(said(Finding.of(FindingKind.NOTHING_PLAUSIBLE, why=NOT_POSITIVE)))
    fitting = trusted[trusted["accelerators"] >= fits_from].reset_index(drop=True)
    # no count predicted holds the model: read as without memory, none advised (``holds``)
    holds = bool(len(fitting))
    fitting = fitting if holds else trusted
    chosen, held_back = _chosen(fitting, target_efficiency, refused)
    larger = trusted[trusted["accelerators"] > chosen["accelerators"]]
    focus = larger.iloc[0] if len(larger) else trusted.iloc[-1]
    term = dominant_term(focus)
    largest = int(trusted["accelerators"].iloc[-1])
    cap = cap_at(focus) if len(larger) else stopped_by(frame, largest, searched)
    change = cap if cap in ("convergence", *STOPPED) else term
    if cap == "none" and len(larger):
        change = "uncertain" if held_back is not None else term
    return Decision(
        chosen=Chosen(
            accelerators=int(chosen["accelerators"]),
            accum=int(chosen["accum"]),
            **{name: float(chosen[name]) for name in _CHOSEN},
            reaches_target=bool(
                chosen["efficiency"] >= target_efficiency or chosen["accelerators"] <= fits_from
            ),
        ),
        target_efficiency=target_efficiency,
        held_back=maybe(_held, held_back),
        fastest=int(fitting.loc[fitting["time_to_train_min"].idxmin(), "accelerators"])
        if holds
        else None,
        largest=largest,
        focus=Focus(
            accelerators=int(focus["accelerators"]),
            **{name: float(focus[name]) for name in _FOCUS},
            rests_on=str(focus.get("rests_on", "predicted")),
        ),
        limit=Limit(
            dominant_term=term,
            overheads_ms=overheads(focus)
            if focus["accelerators"] > 1
            else dict.fromkeys(OVERHEADS, 0.0),
            cap=cap,
            change=change,
            without_dominant_efficiency=_without(focus, (term,)),
            also_shrink=_also(focus, term, target_efficiency),
        ),
        warnings=warnings,
        refused=refused,
        holds=holds,
    )


def _without(focus: pd.Series, terms: tuple[str, ...]) -> float | None:
    """The efficiency at ``focus`` with the overheads ``terms`` gone from its step (the
    rest unchanged): whether removing them would reach a target."""
    if focus["accelerators"] < 2 or not set(terms) <= set(OVERHEADS):
        return None
    step = float(focus["step_ms"])
    left = step - sum(overheads(focus)[t] for t in terms)
    if not left > 0:
        return None
    return float(focus["speedup"]) * step / left / float(focus["accelerators"])


def _also(focus: pd.Series, term: str, target: float) -> tuple[str, ...]:
    """The fewest other overheads, largest first, that must go with ``term`` for
    ``focus`` to reach ``target``; () when ``term`` alone does, or not even all of them
    would."""
    gone = _without(focus, (term,))
    if gone is None or gone >= target:
        return ()
    parts = overheads(focus)
    also: list[str] = []
    for name in sorted((k for k in parts if k != term), key=parts.__getitem__, reverse=True):
        also.append(name)
        reached = _without(focus, (term, *also))
        if reached is None or reached >= target:
            return tuple(also)
    return ()  # not even every overhead gone reaches it: said so


# the columns of the predictions a Decision keeps for the chosen count and for the focus
_SPEEDUP = ("speedup", "speedup_low", "speedup_high", "throughput_efficiency", "convergence_factor")
_CHOSEN = ("batch_per_device", "global_batch", "time_to_train_min", "efficiency", *_SPEEDUP)
_FOCUS = ("step_ms", "compute_ms", *_SPEEDUP)


def _chosen(
    trusted: pd.DataFrame, target: float, refused: bool = False
) -> tuple[pd.Series, pd.Series | None]:
    """The fastest count that reaches ``target`` efficiency with a speedup surely above the
    smallest count's (1 device's, or the fewest that hold the model: ``trusted``'s first;
    its interval's low end; never above it when ``refused``: an input cannot be true), and
    the faster count held back because its speedup is not sure (None when there is none)."""
    first = trusted.iloc[0]
    smallest = trusted["accelerators"] == first["accelerators"]
    reaching = trusted[(trusted["efficiency"] >= target) | smallest]
    # a count resting on one run has no interval (NaN): its value is all there is to read
    low = reaching["speedup_low"].fillna(reaching["speedup"])
    base = float(first["speedup"])  # 1 where the smallest count is one device
    at_first = reaching["accelerators"] == first["accelerators"]
    sure = reaching[at_first | ((low > base) & (not refused))]
    chosen = sure.loc[sure["time_to_train_min"].idxmin()]
    at = reaching["time_to_train_min"].idxmin()
    best = reaching.loc[at]
    if int(best["accelerators"]) != int(chosen["accelerators"]) and (refused or low[at] <= base):
        return chosen, best
    return chosen, None


def _governing(found: Sequence[Disagreement], n: int, measured: Collection[int]) -> list:
    """The disagreements a row at ``n`` devices rests on: those at ``n``; else, where the
    bench measured no count in between, those at the largest disagreeing count below (a
    model that missed a measured count is not trusted to recover above it)."""
    at = [d for d in found if d.accelerators == n]
    below = [d.accelerators for d in found if d.accelerators < n]
    if at or not below:
        return at
    last = max(below)
    if any(last < k <= n for k in measured):
        return []  # a count measured in between agreed: the model holds from there
    return [d for d in found if d.accelerators == last]


def applied(
    frame: pd.DataFrame | None,
    found: Sequence[Disagreement],
    measured: Collection[int] = (),
) -> pd.DataFrame | None:
    """``frame`` (the predictions, or the weak-scaling alternative) with every row at a
    disagreeing count resting on the measurement there: its throughput columns scaled by
    the measured over the predicted speedup (the row's own configuration's where measured,
    else the count's other configuration's), its time columns divided by it, its speedup
    interval the runs' relative range; so do the counts above it up to the next count
    ``measured`` (``_governing``)."""
    if frame is None or not found:
        return frame
    out = frame.copy()
    for i, row in frame.iterrows():
        at = _governing(found, int(row["accelerators"]), measured)
        own = [
            d
            for d in at
            if (d.batch_per_device, d.accum) == (int(row["batch_per_device"]), int(row["accum"]))
        ]
        if not at:
            continue
        d = (own or at)[0]
        seen = d.measured
        factor = seen.speedup / d.predicted.speedup
        # the measured step split: the model's terms plus what they leave unexplained
        out.loc[i, "unexplained_ms"] = row["step_ms"] / factor - row["step_ms"]
        below = d.accelerators != row["accelerators"]
        out.loc[i, "rests_on"] = "measured_below" if below else "measured"
        for column in WITH_THROUGHPUT:
            if column in out:
                out.loc[i, column] = row[column] * factor
        for column in WITH_TIME:
            if column in out:
                out.loc[i, column] = row[column] / factor
        speedup, step = out.loc[i, "speedup"], out.loc[i, "step_ms"]
        if seen.speedup_low is None or seen.speedup_high is None:  # one run: no interval (NaN)
            for column in ("speedup_low", "speedup_high", "step_ms_low", "step_ms_high"):
                out.loc[i, column] = math.nan
            continue
        out.loc[i, "speedup_low"] = speedup * seen.speedup_low / seen.speedup
        out.loc[i, "speedup_high"] = speedup * seen.speedup_high / seen.speedup
        # the step's interval the speedup's, inverted: the runs' range, not the model's
        out.loc[i, "step_ms_low"] = step * seen.speedup / seen.speedup_high
        out.loc[i, "step_ms_high"] = step * seen.speedup / seen.speedup_low
    return out


def below_mlperf(
    frame: pd.DataFrame, mlperf_floor: Sequence[tuple[int, float, str]]
) -> tuple[tuple[int, float, float, str], ...]:
    """(count, minutes, floor, system) of each count whose predicted time to train beats
    the fastest MLPerf system of the same accelerator count on the workload
    (``mlperf_floor``: (count, minutes, system)): the inputs cannot be true."""
    floor = {n: (minutes, system) for n, minutes, system in mlperf_floor}
    frame = frame[plausible(frame)]
    return tuple(
        (row.accelerators, row.time_to_train_min, *floor[row.accelerators])
        for row in frame.itertuples()
        if row.accelerators in floor and row.time_to_train_min < floor[row.accelerators][0]
    )
