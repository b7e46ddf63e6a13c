"""The 80% intervals of a predictions table (``recommend.predictions``): every row's
step and speedup re-predicted at the ends of the fixed cost's range and of the priors'
ranges, then widened by the step's error at N (``advice/model/priors.py``).

Readings: No confident count from a guess: the count at each end of every assumed term's range.

A term nothing measured (the FLOPs per sample of a model given by its parameters, a fixed
per-step cost, a link assumed) has a range; the advice is computed again at each end
(``ends``) and where the count chosen moves, the count is withheld
(``Decision.withheld_by``): the one thing to give or measure leads the answer, the table
is still shown. ResNet-50 on 8 A100s by its parameters alone was "Use 1 device" because
6 x parameters turned most of its step into an invented fixed cost (issue 60).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from gpuscale.advice.explain.answer import SETTLE, value_text
from gpuscale.advice.inputs import AdviceInputs
from gpuscale.advice.model.fixed_cost import resplit
from gpuscale.advice.model.network import Link
from gpuscale.advice.types import Decision, Reading
from gpuscale.hardware.links import PRESETS
from gpuscale.quantities import counted


def _across(inputs: AdviceInputs, frame: pd.DataFrame) -> list[tuple[np.ndarray, ...]]:
    """(steps, speedups) of every row at its (batch, accumulation) with the fixed cost
    at its point, and at the ends of its range where that is uncertain (the measured step
    kept: ``fixed_cost.resplit``) and of the priors' ranges (``advice/model/priors.py``)."""
    found = [(frame["step_ms"].to_numpy(float), frame["speedup"].to_numpy(float))]
    fixed = inputs.fixed
    computes = list(inputs.prior_range)
    if fixed is not None and fixed.uncertain:
        computes += [
            resplit(inputs.compute, inputs.model, fixed.at_batch, value)
            for value in (fixed.low_ms, fixed.high_ms)
        ]
    for compute in computes:
        other = replace(inputs, compute=compute)
        steps = np.array(
            [
                other.step(int(r.accelerators), r.batch_per_device, int(r.accum)).step_ms
                for r in frame.itertuples()
            ]
        )
        time = (
            frame["samples_to_train"].to_numpy(float)
            * steps
            / frame["global_batch"].to_numpy(float)
        )
        found.append((steps, time[0] / time))
    return found


def add_intervals(frame: pd.DataFrame, inputs: AdviceInputs, ideal: pd.Series) -> None:
    """The 80% intervals of the step and the speedup: over the fixed cost's range, then
    ``x exp(-/+ width at N)`` of the step's error; the speedup's upper end never above
    ``ideal`` (linear)."""
    width = np.array([inputs.error.width_at(int(n)) for n in frame["accelerators"]])
    steps, speedups = zip(*_across(inputs, frame), strict=True)
    frame["step_ms_low"] = np.min(steps, axis=0) * np.exp(-width)
    frame["step_ms_high"] = np.max(steps, axis=0) * np.exp(width)
    frame["speedup_low"] = np.min(speedups, axis=0) * np.exp(-width)
    high = pd.Series(np.max(speedups, axis=0) * np.exp(width), index=frame.index)
    frame["speedup_high"] = high.clip(upper=ideal)


# An assumed link's range: across CPU sockets (its slowest) to PCIe 4.0 P2P through a switch.
LINK_ENDS = (("low", "pcie-sys"), ("high", "pcie4-x16"))


def link_ends(basis: Any) -> list[tuple[str, str, float, str, Any]]:
    """The basis with an assumed link at each end of its range (none where the link was
    given, detected or measured)."""
    if not basis.link_assumed:
        return []
    network = basis.network
    return [
        (
            "link",
            end,
            PRESETS[name].busbw_gbs,
            "GB/s",
            replace(basis, network=replace(network, intra=Link.from_preset(name))),
        )
        for end, name in LINK_ENDS
    ]


def read(
    ends: Sequence[tuple[str, str, float, str, Any]],
    decide_at: Callable[[Any], Decision],
) -> tuple[Reading, ...]:
    """The count and its speedup at each end (``decide_at``: the decision of a basis)."""
    found = []
    for term, end, value, unit, basis in ends:
        d = decide_at(basis)
        found.append(Reading(term, end, float(value), unit, d.accelerators, d.speedup))
    return tuple(found)


def with_readings(decision: Decision, readings: tuple[Reading, ...]) -> Decision:
    """``decision`` with its readings and the first term whose range moves the count."""
    moved = next((r.term for r in readings if r.accelerators != decision.accelerators), None)
    return replace(decision, readings=readings, withheld_by=moved)


def withheld(decision: Decision) -> str:
    """The sentence leading an answer whose count is withheld ("" where it is not)."""
    term = decision.withheld_by
    if term is None:
        return ""
    moved = [r for r in decision.readings if r.term == term]
    at = "; ".join(
        f"at {value_text(r)}, {counted(r.accelerators, 'device')} ({r.speedup:.2f}x)" for r in moved
    )
    return (
        f"Count withheld: the {term.replace('_', ' ')} was assumed and its range moves the "
        f"count (as assumed, {counted(decision.accelerators, 'device')}, "
        f"{decision.speedup:.2f}x; {at}): {SETTLE[term]}."
    )
