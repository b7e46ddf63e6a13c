"""What qualifies the headline, said before it (inputs not given, a step interval too wide,
a measurement outside its interval), and an advice's words (:class:`Worded`)."""

from __future__ import annotations

import math
from dataclasses import replace
from functools import cached_property
from typing import Protocol

import pandas as pd

from gpuscale.advice.assumed import Assumption
from gpuscale.advice.assumptions import for_strategy, input_pipeline, settle
from gpuscale.advice.calibration import Power
from gpuscale.advice.explain.answer import readings_apart
from gpuscale.advice.explain.explanation import explain
from gpuscale.advice.explain.phrasebook import WITHHELD, reading, sentence
from gpuscale.advice.explain.phrasebook import said as said_finding
from gpuscale.advice.explain.qualifiers import (
    against_measured,
    disagreement,
    memory_said,
    source_at,
)
from gpuscale.advice.explain.runs import on_devices
from gpuscale.advice.records import Decision
from gpuscale.advice.request_fields import DEFAULT_BATCH, DEFAULT_SAMPLES
from gpuscale.advice.types import TermId, again, bench_run, maybe, more_steps, rerun
from gpuscale.bench.evidence import FIRM_STEPS, STEPS_FIX, ways
from gpuscale.bench.support import Support, weak
from gpuscale.plausibility import HOST_NOISE, FlagKind
from gpuscale.quantities import filled, joined, numbers_apart
from gpuscale.tables.advice import ADVICE_COLUMNS, NOT_POSITIVE
from gpuscale.tables.bench import on_a_larger_host

# a step interval wider than a factor of 1.5 cannot decide a count
WIDE_STEP_INTERVAL = math.log(1.5)


def headline(
    *,
    defaults: list[str],
    noise_steps: int | None,
    step_width_log: float,
    devices: int,
    host_devices: int | None = None,
    steps: int = FIRM_STEPS,
    again: str = "",
) -> list[str]:
    """The sentences that qualify the recommendation (empty when nothing does)."""
    rests = list(defaults)
    if noise_steps is not None:
        rests.append(sentence("noise_steps", steps=noise_steps, firm=steps))
    lines = [sentence("provisional", rests="; ".join(rests))] if rests else []
    if devices > 1 and step_width_log > WIDE_STEP_INTERVAL:
        host = on_a_larger_host(devices, host_devices)
        said = sentence(
            "not_firm", width=step_width_log, again=again, devices=devices, firm=steps, host=host
        )
        lines.append(said)
    return lines


def withheld(decision: Decision, assumed: tuple[Assumption, ...]) -> str:
    """The sentence leading an answer whose count is withheld ("" where it is not): the
    count at each end of the range that differs from the value ``assumed``."""
    term = decision.withheld_by
    if term is None:
        return ""
    at = "; ".join(reading(r, speedup=True) for r in readings_apart(decision, assumed))
    return sentence("count_withheld", row=WITHHELD[term], c=decision.chosen, at=at)


def measure_first(found: Support | None, host_devices: int | None = None) -> str | None:
    """What to measure before any change where the runs advised on are weak or all
    flagged (those runs again, as their flags say); None where they are not."""
    if found is None or not (weak(found) or found.all_flagged):
        return None
    counts = found.counts or (1, 2)
    said = {"model": found.model or "the model", "on": on_devices(counts)}
    if not weak(found):
        kinds = [k for k in found.flag_kinds if k != FlagKind.BASELINE]  # its N = 1 run's own
        other = joined([k for k in kinds if k not in HOST_NOISE])
        return sentence(
            "measure_first",
            case="flagged",
            kinds=joined(kinds),
            command=bench_run(found.model, counts, host_devices, run=found.run),
            how=any(k in HOST_NOISE for k in kinds),  # on a quieter machine
            other=other,
            **said,
        )
    # runs of the steps asked are in the file: not one more; else the command holds the
    # steps, the other fixes said as the bench says them
    other = ways([f for f in found.fixes if f != STEPS_FIX], found.steps_needed)
    return sentence(
        "measure_first",
        case="more" if more_steps(found) else "again",
        again=again(found, counts, host_devices),
        command=rerun(found, counts, host_devices),
        beside=filled(", {}", joined(other)),
        **said,
    )


class RowFlags(Protocol):
    """A predictions row's flags as data (a row of ``DataFrame.itertuples``)."""

    not_positive: bool
    above_linear: float  # its speedup where above linear, else NaN
    linear_speedup: float  # linear where above it, else NaN
    accelerators: int


def row_flags(row: RowFlags, first: pd.Series) -> str:
    """Why a predicted row cannot be true, from its flags as data."""
    flags = [NOT_POSITIVE] * bool(row.not_positive)
    if not math.isnan(row.above_linear):
        # above linear as printed too (8.004 above 8, never 8 above 8), against the first
        speedup, bound = numbers_apart(row.above_linear, row.linear_speedup)
        over = f" from {first['accelerators']:,}" if first["accelerators"] != 1 else ""
        flags.append(
            f"speedup {speedup} above linear, {bound} on {row.accelerators:,} devices{over}"
        )
    return "; ".join(flags)


def flagged(table: pd.DataFrame, power: Power) -> pd.DataFrame:
    """The predictions with the search's flags said in ``flags`` and where each row's watts
    come from in ``energy_source``."""
    first = table.iloc[0]
    flags = [row_flags(r, first) for r in table.itertuples()]
    rows = zip(table["accelerators"].astype(int), table["batch_per_device"], strict=True)
    sources = [source_at(power, n, b) for n, b in rows]
    return table.assign(flags=flags, energy_source=sources)[list(ADVICE_COLUMNS)]


class Worded:
    """The words of an advice's record (``search.decide.Searched``), read when asked:
    ``api.Advice`` is the record with them."""

    def __str__(self) -> str:
        """The advice as ``gpuscale advise`` says it."""
        return "\n".join(f"- {line}" for line in self.explanation)

    @cached_property
    def predictions(self) -> pd.DataFrame:
        """``table`` with its flags and power sources said (``tables.advice``)."""
        return flagged(self.table, self.calibration.machine.power)

    @cached_property
    def alternative(self) -> pd.DataFrame | None:
        return maybe(flagged, self.weak_table, self.calibration.machine.power)

    @cached_property
    def assumptions(self) -> tuple[Assumption, ...]:
        """The assumptions with DDP's own work as the strategy advised prices it and the input
        pipeline's saying the rate the largest count consumes."""
        cal = self.calibration
        found = for_strategy(cal.said.assumptions, cal.run.strategy)
        if self.input_rate is None:
            return found
        load = self.input_rate
        needed = input_pipeline(sentence("input_rate", load=load), load.samples_per_s)
        return tuple(needed if a.term == TermId.INPUT else a for a in found)

    @cached_property
    def decision(self) -> Decision:
        """The search's Decision with its words: the warnings and what to measure first."""
        d, cal = self.decided, self.calibration
        held_back = None if d.held_back is None else d.held_back.accelerators
        first = measure_first(cal.runs.evidence, cal.runs.host_devices) or settle(
            self.assumptions,
            strong=cal.run.kept_global_batch is not None,
            held_back=held_back,
            refused=d.refused,
            host_devices=cal.runs.host_devices,
            again=again(cal.runs.evidence, (1, held_back or 2), cal.runs.host_devices),
        )
        warnings = [*map(said_finding, d.warnings)]
        if self.below_mlperf:  # the first count predicted faster than MLPerf's fastest allows
            n, minutes, floor, system = self.below_mlperf[0]
            more = len(self.below_mlperf) - 1 or None
            said = dict(n=n, minutes=minutes, floor=floor, system=system, more=more)
            warnings.append(sentence("below_mlperf", **said))
        return replace(d, warnings=tuple(warnings), settle=first)

    @cached_property
    def caveats(self) -> tuple[str, ...]:
        """What makes the headline less firm: the explanation's first lines."""
        cal, d = self.calibration, self.decision
        link = cal.machine.network.intra.name  # the inputs not given, each with what to give
        inter = next((a.value for a in self.assumptions if a.term == TermId.INTER_NODE), None)
        given = (*self.qualifiers.defaults, *(["inter_node"] if inter else []))
        said = {"samples": DEFAULT_SAMPLES, "batch": DEFAULT_BATCH, "link": link, "inter": inter}
        defaults = [
            sentence("default_used", option=o, **said)
            for o in ("samples", "batch", "link", "inter_node")
            if o in given
        ]
        lines = headline(
            defaults=defaults,
            noise_steps=self.qualifiers.noise_steps,
            step_width_log=cal.model.error.width_log,
            devices=d.chosen.accelerators,
            host_devices=cal.runs.host_devices,
            steps=getattr(cal.runs.evidence, "steps_needed", FIRM_STEPS),
            again=again(cal.runs.evidence, (1, d.chosen.accelerators), cal.runs.host_devices),
        )
        found = self.disagreements
        beside = against_measured(self.measured_counts, found)
        held = memory_said(self.memory, cal.run.strategy, d.chosen.accelerators)
        first = filter(None, (held, self.qualifiers.model_note, withheld(d, self.assumptions)))
        return (*first, *map(disagreement, found), *lines, *beside)

    @cached_property
    def explanation(self) -> list[str]:
        """The caveats, then --explain's sentences, the model chosen after the decision."""
        lines = [*self.caveats, *explain(self)]
        said = self.qualifiers
        if not said.model_chosen or said.model_note:
            return lines
        at = self.decision_line
        return [*lines[: at + 1], said.model_chosen, *lines[at + 1 :]]

    @property
    def decision_line(self) -> int:
        """Where "Use N devices ..." stands in ``explanation``."""
        return len(self.caveats) + len(self.decision.warnings)
