"""A term of the step as a record: its number (:class:`Quantity`), what is said of it, where
it came from and how to measure it (:class:`Assumption`); ``assumptions`` says each one."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpuscale.advice.model.priors import strategy_name
from gpuscale.advice.types import Measure, Source, TermId
from gpuscale.quantities import filled

# Each term's name in the words (``-f json``'s ``term``)
TERM_NAMES = {
    TermId.FIXED: "Fixed per-step cost",
    TermId.OVERLAP: "Overlap",
    TermId.DDP: "DDP's own work",
    TermId.WAIT: "Wait for the slowest device",
    TermId.INPUT: "Input pipeline",
    TermId.CONVERGENCE: "Samples to converge at a larger global batch",
    TermId.LINK: "Link",
    TermId.INTER_NODE: "Link between nodes",
    TermId.LINK_CLASS: "Link class",
}
# A term's number in ``-f json`` (all None for a choice, such as the link class)
NUMBER = ("value", "low", "high", "unit")


@dataclass(frozen=True, slots=True)
class Quantity:
    """A term's value in ``unit``, its range, its value per device count (``at``), DDP's
    bucket copies (``copies_ms``) where the value and ends include them."""

    value: float
    unit: str
    low: float | None = None
    high: float | None = None
    at: tuple[tuple[int, float], ...] = ()
    copies_ms: float | None = None

    def with_copies(self, copies_ms: float) -> Quantity:
        """The term with DDP's bucket copies (ms) in its value and ends."""
        if not copies_ms:
            return self
        low = None if self.low is None else self.low + copies_ms
        high = None if self.high is None else self.high + copies_ms
        return replace(self, value=self.value + copies_ms, low=low, high=high, copies_ms=copies_ms)

    def to_dict(self) -> dict[str, object]:
        found = {key: getattr(self, key) for key in NUMBER}
        if self.at:
            found["at"] = {str(n): v for n, v in self.at}
        if self.copies_ms is not None:
            found["copies_ms"] = self.copies_ms
        return found


@dataclass(frozen=True, kw_only=True, slots=True)
class Assumption:
    """One term: its value said and as a number (None for a choice), whence, how to measure it."""

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
        number = dict.fromkeys(NUMBER) if self.quantity is None else self.quantity.to_dict()
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
        how = filled("; to measure: {}", self.measure)
        return f"{self.name}: {self.value} ({self.source}: {self.basis}{how})."


@dataclass(frozen=True, kw_only=True, slots=True)
class BenchTerms:
    """What a bench file measured beside the calibration: the strategy's own work (ms per
    step), the N = 1 steps' sd over their mean (None: under two), the slowdowns held."""

    overlap_measured: bool
    own_ms: float
    spread: float | None
    held: tuple[tuple[int, float], ...]
