"""The recommendation as one :class:`Decision`, read off the predictions (reconciled with
the measurements: ``reconcile.py``); the words and the JSON render it, so they cannot
disagree.

* ``chosen``: the fastest count to a trained model whose efficiency reaches the target and
  whose 80% interval of the speedup lies above 1 (``held_back``: the faster count whose
  interval holds "no gain"); one device where an input cannot be true (``refused``).
* ``focus``: the smallest count above the chosen (else the largest predicted), where the
  dominant term, the cap and what would change it are read.
* ``limit.dominant_term``: the largest of ``OVERHEADS`` at ``focus``, or ``compute`` at
  >= 95% throughput efficiency; ``limit.cap``: the factor of the speedup that loses more
  there (log scale): ``overheads``, ``convergence`` or ``none``, or why the search stopped
  (``stopped_by``).
* ``readings``: the count at each end of every assumed term's range (``decided``)."""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import replace

import pandas as pd

from gpuscale.advice.calibration import Calibration, Search
from gpuscale.advice.explain.phrasebook import said
from gpuscale.advice.model.network import MIB
from gpuscale.advice.records import Chosen, Decision, Focus, HeldBack, Limit, Picks
from gpuscale.advice.search import derive
from gpuscale.advice.search.predictions import plausible
from gpuscale.advice.types import STOPPED, Finding, FindingKind, Reading, TermId, maybe
from gpuscale.analysis.equilibrium import knee_pick
from gpuscale.tables.advice import NOT_POSITIVE

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


def overheads(row: pd.Series) -> dict[TermId, float]:
    """The step's overheads (ms): the fixed cost not spread, waiting, DDP's copies, the
    exposed communication split into bandwidth and latency in their shares of the whole, and
    what a measured step leaves unexplained."""
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
    """Why no count above ``largest`` has a row: ``batch`` where a count ``searched`` above
    it has none (the global batch kept does not split over it), ``flagged`` where those above
    failed a plausibility check, else ``devices``."""
    above = {int(n) for n in searched if n > largest}
    if above - set(frame["accelerators"].astype(int)):
        return "batch"
    return "flagged" if above else "devices"


def _held(row: pd.Series) -> HeldBack:
    return HeldBack(int(row["accelerators"]), float(row["speedup_low"]))


def decide(
    frame: pd.DataFrame,
    target_efficiency: float,
    warnings: tuple[str | Finding, ...] = (),
    refused: bool = False,
    searched: Collection[int] = (),
    fits_from: int = 1,
) -> Decision:
    """The Decision of a predictions table (flagged rows left out); ``refused``: an input
    cannot be true; ``searched``: the counts searched; ``fits_from``: the fewest devices that
    hold the model, standing where one device would (none predicted: nothing advised)."""
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
    parts = overheads(focus) if focus["accelerators"] > 1 else dict.fromkeys(OVERHEADS, 0.0)
    rests_on = str(focus.get("rests_on", "predicted"))
    explained = None
    if rests_on != "predicted":
        explained = float(focus["step_ms"]) - parts[TermId.UNEXPLAINED]
    ratio = 1 / float(focus["convergence_factor"]) if cap == "convergence" else None
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
            rests_on=rests_on,
            samples_ratio=ratio,
            explained_ms=explained,
        ),
        limit=Limit(
            dominant_term=term,
            overheads_ms=parts,
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
    """The efficiency at ``focus`` with the overheads ``terms`` gone from its step."""
    if focus["accelerators"] < 2 or not set(terms) <= set(OVERHEADS):
        return None
    step = float(focus["step_ms"])
    left = step - sum(overheads(focus)[t] for t in terms)
    if not left > 0:
        return None
    return float(focus["speedup"]) * step / left / float(focus["accelerators"])


def _also(focus: pd.Series, term: str, target: float) -> tuple[str, ...]:
    """The fewest other overheads, largest first, that must go with ``term`` for ``focus``
    to reach ``target``; () when ``term`` alone does, or not even all of them would."""
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
    """The fastest count that reaches ``target`` efficiency with a speedup surely (its
    interval's low end) above the smallest count's, never above it when ``refused``; and the
    faster count held back as not sure (None: none)."""
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


def below_mlperf(
    frame: pd.DataFrame, mlperf_floor: Sequence[tuple[int, float, str]]
) -> tuple[tuple[int, float, float, str], ...]:
    """(count, minutes, floor, system) of each count whose time to train beats the
    fastest MLPerf system's floor at that count (``mlperf_floor``): inputs that cannot be true."""
    floor = {n: (minutes, system) for n, minutes, system in mlperf_floor}
    frame = frame[plausible(frame)]
    return tuple(
        (row.accelerators, row.time_to_train_min, *floor[row.accelerators])
        for row in frame.itertuples()
        if row.accelerators in floor and row.time_to_train_min < floor[row.accelerators][0]
    )


def decided(
    cal: Calibration,
    frame: pd.DataFrame,
    below: Sequence[tuple[int, float, float, str]],
    ends: Sequence[tuple[Calibration, pd.DataFrame]],
    fits_from: int,
) -> Decision:
    """The Decision of ``cal``'s ``frame`` (refused where an input cannot be true or a count
    is ``below`` MLPerf's floor), with the count chosen at each end of every assumed term's
    range (``ends``, in ``Search.ends``' order) and the first term whose range moves it
    (``withheld_by``)."""

    def decision_of(at: Calibration, table: pd.DataFrame, refused: bool) -> Decision:
        efficiency, warnings = at.search.target_efficiency, at.said.warnings
        # why none above the largest predicted: the cap (``device_counts``)
        return decide(table, efficiency, warnings, refused, at.machine.device_counts, fits_from)

    decision = decision_of(cal, frame, cal.said.implausible or bool(below))
    readings = []
    for (term, end, value, unit, _), (at, table) in zip(cal.search.ends, ends, strict=True):
        d = decision_of(at, table, at.said.implausible)
        readings.append(
            Reading(term, end, float(value), unit, d.chosen.accelerators, d.chosen.speedup)
        )
    chosen = decision.chosen.accelerators
    moved = next((r.term for r in readings if r.accelerators != chosen), None)
    fewer = cal.model.spec.units > 1
    if cal.run.strategy == "ddp":
        fewer = cal.model.spec.grad_bytes > cal.run.bucket_mb * MIB
    limit = replace(decision.limit, fewer_messages=fewer)
    stopped = decision.limit.cap in STOPPED
    searched = derive.counts(cal, frame, decision.focus.accelerators, stopped)
    return replace(
        decision, readings=tuple(readings), withheld_by=moved, limit=limit, counts=searched
    )


def picked(frame: pd.DataFrame, fits_from: int, goal: Search) -> Picks:
    """The counts other rules pick off the trusted predictions (from ``fits_from`` up): the
    largest reaching the target efficiency, the cheapest in device-hours, the knee of time
    against count, the count maximising speedup x efficiency, and the largest keeping
    efficiency >= ``goal.threshold`` x its best."""
    plain = trusted = frame[plausible(frame)]
    fitting = trusted[trusted["accelerators"] >= fits_from]
    trusted = fitting if len(fitting) else trusted
    ok = trusted[trusted["efficiency"] >= goal.target_efficiency]
    efficient = int(ok["accelerators"].max()) if len(ok) else None
    cheapest = None
    if trusted["accelerator_hours"].notna().any():
        cheapest = int(trusted.loc[trusted["accelerator_hours"].idxmin(), "accelerators"])
    table = pd.DataFrame(
        {
            "accelerators": trusted["accelerators"],
            "time_to_train_min": trusted["time_to_train_min"],
            "system_id": trusted["accelerators"].astype(str),
        }
    )
    knee = knee_pick(table)
    score = trusted["speedup"] * trusted["efficiency"]
    good = trusted[trusted["efficiency"] >= goal.threshold * trusted["efficiency"].max()]
    equilibrium = {
        "knee": int(knee["accelerators"]) if knee is not None else None,
        "max_speed_x_efficiency": int(trusted.loc[score.idxmax(), "accelerators"]),
        "efficiency_threshold": int(good["accelerators"].max()) if len(good) else None,
    }
    return Picks(efficient, cheapest, equilibrium, derive.equilibrium(plain, equilibrium))
