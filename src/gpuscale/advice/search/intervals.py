"""The speedup's 80% interval of the advice by numbers, calibrated per link class on the
development rows of published 1-vs-N throughput tables.

``data/advice_intervals.json`` holds the rule: its ``kind`` and, per link class, a width
below (``low``) and above (``high``) the speedup, chosen and fitted by
``benchmarks/advice_intervals.py`` (leave-one-setup-out coverage on the development rows).

At ``N`` devices, with the model's point ``p`` and interval ``[l, h]`` and
``g = sqrt(log2 N)``, a class's widths ``a`` (low) and ``b`` (high) give:

* ``model``: ``[l, h]`` as it is;
* ``scale``: ``[p (l/p)^a, p (h/p)^b]``;
* ``band``: ``[p exp(-a g), p exp(b g)]``;
* ``union``: the wider of the model's interval and that band at each end;
* ``extend``: ``[l exp(-a g), h exp(b g)]``;

the upper end never above ``ceiling`` and the interval always holding the point. A count's
class is ``multinode`` where it spans nodes, else its link's (``model.network.link_class``);
a link of no class keeps the model's interval."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources

import numpy as np
import pandas as pd

from gpuscale.advice.calibration import Calibration
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.model.network import CLASSES, count_class
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.interconnect.network import Network

INTERVALS_FILE = "advice_intervals.json"
KINDS = ("model", "scale", "band", "union", "extend")


@dataclass(frozen=True, slots=True)
class ClassWidths:
    """One link class's widths (a factor for ``scale``, a log width at N = 2 else) and
    the development rows they were fitted on."""

    low: float
    high: float
    development_rows: int


@dataclass(frozen=True, slots=True)
class IntervalRule:
    """The rule: its kind, its name as the fit called it, the widths per link class."""

    kind: str
    name: str
    classes: Mapping[str, ClassWidths]

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"interval rule {self.kind!r} is none of {', '.join(KINDS)}")
        unknown = sorted(set(self.classes) - set(CLASSES))
        if unknown:
            raise ValueError(f"link classes {unknown} are none of {', '.join(CLASSES)}")
        for name, w in self.classes.items():
            if not (w.low >= 0 and w.high >= 0 and math.isfinite(w.low + w.high)):
                raise ValueError(sentence("interval_widths", name=name, widths=str(w)))

    def said(self, classes: Sequence[str | None]) -> Finding | None:
        """The rule as a finding for the counts' link ``classes`` (None where none of them
        has one, or the rule is the model's own interval)."""
        found = [c for c in dict.fromkeys(classes) if c in self.classes]
        if not found or self.kind == "model":
            return None
        each = []
        for name in found:
            w = self.classes[name]
            each.append(
                Finding.of(
                    FindingKind.INTERVAL_CLASS,
                    link_class=name,
                    rule=self.kind,
                    low=w.low,
                    high=w.high,
                    # a band's ends at N = 2 as shares of the point
                    low_share=math.exp(-w.low) - 1,
                    high_share=math.exp(w.high) - 1,
                    rows=w.development_rows,
                )
            )
        return Finding.of(FindingKind.INTERVAL_CALIBRATED, rule=self.kind, classes=tuple(each))


def classes_at(network: Network, counts: Sequence[int]) -> list[str | None]:
    """Each count's link class on ``network`` (``model.network.count_class``)."""
    return [count_class(network, int(n)) for n in counts]


def ends(
    kind: str,
    widths: tuple[np.ndarray, np.ndarray],
    point: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    counts: np.ndarray,
    ceiling: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The interval of ``kind`` at each row: ``widths`` (low, high) per row, the model's
    ``point`` and ``[low, high]`` at ``counts`` devices, the upper end at most ``ceiling``."""
    a, b = (np.asarray(w, float) for w in widths)
    p, lo, hi = (np.asarray(v, float) for v in (point, low, high))
    g = np.sqrt(np.log2(np.maximum(np.asarray(counts, float), 1.0)))  # 0 at one device
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "model":
            new_low, new_high = lo, hi
        elif kind == "scale":
            new_low, new_high = p * (lo / p) ** a, p * (hi / p) ** b
        elif kind == "band":
            new_low, new_high = p * np.exp(-a * g), p * np.exp(b * g)
        elif kind == "union":
            new_low, new_high = (
                np.minimum(lo, p * np.exp(-a * g)),
                np.maximum(hi, p * np.exp(b * g)),
            )
        elif kind == "extend":
            new_low, new_high = lo * np.exp(-a * g), hi * np.exp(b * g)
        else:
            raise ValueError(f"interval rule {kind!r} is none of {', '.join(KINDS)}")
    # the point inside, the upper end at most the ceiling (a point above it is flagged)
    return np.minimum(new_low, p), np.minimum(np.maximum(new_high, p), ceiling)


def widened(
    rule: IntervalRule | None,
    cal: Calibration,
    frame: pd.DataFrame,
    compute_ms: np.ndarray,
    compute_alone: np.ndarray,
    classes: Sequence[str | None],
) -> tuple[pd.DataFrame, Finding | None]:
    """The predictions ``frame`` of ``cal`` (its rows' link ``classes``) with the speedup's
    interval by ``rule`` where it is the advice's (``advised``), and the rule said; else
    ``frame`` as it is and None. A row of no class of the rule keeps the model's; the upper
    end is at most linear and ``compute_alone`` (the speedup of a step of compute alone);
    the step's ends move by the same factors (its upper end by the speedup's lower end's),
    never below ``compute_ms`` (the least compute over the ranges) nor past the step."""
    rule = advised(rule, cal)
    if rule is None:
        return frame, None
    counts = frame["accelerators"].to_numpy(float)
    low, high = frame["speedup_low"].to_numpy(float), frame["speedup_high"].to_numpy(float)
    ceiling = np.minimum(compute_alone, counts / counts[0])
    point = frame["speedup"].to_numpy(float)
    known = np.array([c in rule.classes for c in classes], bool)
    a = np.array([rule.classes[c].low if c in rule.classes else 0.0 for c in classes])
    b = np.array([rule.classes[c].high if c in rule.classes else 0.0 for c in classes])
    new_low, new_high = ends(rule.kind, (a, b), point, low, high, counts, ceiling)
    new_low, new_high = np.where(known, new_low, low), np.where(known, new_high, high)
    out = frame.copy()
    out["speedup_low"], out["speedup_high"] = new_low, new_high
    step = frame["step_ms"].to_numpy(float)
    moved_low = np.maximum(frame["step_ms_low"].to_numpy(float) * high / new_high, compute_ms)
    out["step_ms_low"] = np.minimum(moved_low, step)  # the point inside
    out["step_ms_high"] = np.maximum(frame["step_ms_high"].to_numpy(float) * low / new_low, step)
    return out, rule.said(classes)


def advised(rule: IntervalRule | None, cal: Calibration) -> IntervalRule | None:
    """``rule`` where it is the advice's: by numbers, on a link given or detected (a bench
    keeps its own interval, an assumed link its range of presets); else None."""
    if rule is None or cal.runs.from_bench or cal.machine.link_assumed or rule.kind == "model":
        return None
    return rule


def rule_of(entry: Mapping[str, object]) -> IntervalRule:
    """The rule of ``data/advice_intervals.json``'s contents."""
    classes = entry["classes"]
    assert isinstance(classes, Mapping)
    return IntervalRule(
        kind=str(entry["kind"]),
        name=str(entry["name"]),
        classes={
            name: ClassWidths(
                low=float(c["low"]), high=float(c["high"]), development_rows=int(c["rows"])
            )
            for name, c in classes.items()
        },
    )


RULE = rule_of(json.loads((resources.files("gpuscale") / "data" / INTERVALS_FILE).read_text()))
