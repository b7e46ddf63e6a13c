"""An assumed term as a record (``Assumption``): its name in the words (``TERM_NAMES``), its
number and unit (``Quantity``), where it came from and how to measure it."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuscale.advice.model.priors import strategy_name
from gpuscale.advice.types import Measure, Source, TermId
from gpuscale.quantities import filled

# Each term's name in the words (the JSON's ``term``; ``kind`` is its ``TermId``).
TERM_NAMES = {
    TermId.FIXED: "Fixed per-step cost",
    TermId.OVERLAP: "Overlap",
    TermId.DDP: "DDP's own work",
    TermId.WAIT: "Wait for the slowest device",
    TermId.INPUT: "Input pipeline",
    TermId.CONVERGENCE: "Samples to converge at a larger global batch",
    TermId.LINK: "Link",
    TermId.LINK_CLASS: "Link class",
    TermId.STRATEGY: "Strategy",
}


@dataclass(frozen=True, slots=True)
class Quantity:
    """A term's value in ``unit``, its range where it has one, and its value per device
    count where measured at each (``at``)."""

    value: float
    unit: str
    low: float | None = None
    high: float | None = None
    at: tuple[tuple[int, float], ...] = ()

    def to_dict(self) -> dict[str, object]:
        found: dict[str, object] = {
            "value": self.value,
            "low": self.low,
            "high": self.high,
            "unit": self.unit,
        }
        if self.at:
            found["at"] = {str(n): v for n, v in self.at}
        return found


NO_QUANTITY: dict[str, object] = {"value": None, "low": None, "high": None, "unit": None}


@dataclass(frozen=True, kw_only=True, slots=True)
class Assumption:
    """One term: its value as said and as a number (``quantity``; None for a choice), where
    it came from, how to measure it."""

    term: TermId
    value: str
    source: Source
    basis: str
    measure: Measure = field(default_factory=Measure)  # empty where measured
    strategy: str = "ddp"  # whose own work a ``TermId.DDP`` term is (ddp, zero2, fsdp, hybrid)
    quantity: Quantity | None = None

    @property
    def name(self) -> str:
        """The term's name: ``Overlap``, ``FSDP's own work``."""
        if self.term == TermId.DDP:
            return f"{strategy_name(self.strategy)}'s own work"
        return TERM_NAMES[self.term]

    def to_dict(self) -> dict[str, object]:
        """The term as ``-f json`` gives it: its number, range and unit, then the words."""
        number = NO_QUANTITY if self.quantity is None else self.quantity.to_dict()
        return {
            "term": self.name,
            **number,
            "said": self.value,
            "source": str(self.source),
            "basis": self.basis,
            "measure": str(self.measure),
            "kind": str(self.term),
        }

    def sentence(self) -> str:
        """``Overlap: 0.50 (assumed: ...; to measure: ...).``"""
        how = filled("; to measure: {}", self.measure)
        return f"{self.name}: {self.value} ({self.source}: {self.basis}{how})."


@dataclass(frozen=True, kw_only=True, slots=True)
class BenchTerms:
    """What a bench file measured of the step's terms beside the calibration: whether it
    measured the overlap, the strategy's own work per step (ms), the N = 1 steps' standard
    deviation over their mean (None: under two steps) and the slowdowns as the step takes
    them (``Compute.held_slowdown``)."""

    overlap_measured: bool
    own_ms: float
    spread: float | None
    held: tuple[tuple[int, float], ...]
