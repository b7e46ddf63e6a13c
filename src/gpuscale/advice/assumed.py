"""A term of the step as a record: its number (:class:`Quantity`), what is said of it, where
it came from and how to measure it (:class:`Assumption`); ``assumptions`` says each one."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from gpuscale.advice.model.priors import strategy_name
from gpuscale.advice.types import Measure, Source, TermId

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


@dataclass(frozen=True, kw_only=True, slots=True)
class BenchTerms:
    """What a bench file measured beside the calibration: the strategy's own work (ms per
    step), the N = 1 steps' sd over their mean (None: under two), the slowdowns held."""

    overlap_measured: bool
    own_ms: float
    spread: float | None
    held: tuple[tuple[int, float], ...]
