"""The advice's vocabulary, as data: which term of the step a number is (``TermId``),
where it came from (``Source``) and how to measure it (``Measure``, a bench run as data).

One name per concept: a ``Step`` field, a table column, a ``decision.OVERHEADS`` key
and an ``Assumption.term`` say a term by its ``TermId``; words render them
(``advice.assumptions.TERM_NAMES``) and are never read back.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gpuscale.tables.bench import on_a_larger_host


class TermId(StrEnum):
    """A term of the step (or of the time to train) the advice prices."""

    FIXED = "fixed"  # fixed per micro-step: launches, the optimizer step
    RATE = "rate"  # per-sample compute: FLOPs per sample over the achieved rate
    OPTIMIZER = "optimizer"
    DDP = "ddp"  # the strategy's own work (DDP's bucket copies, FSDP's)
    WAIT = "wait"  # for the slowest device
    BANDWIDTH = "bandwidth"  # exposed communication: its bandwidth part
    LATENCY = "latency"  # exposed communication: one latency per collective
    OVERLAP = "overlap"  # the share of communication backward hides
    CONVERGENCE = "convergence"  # samples to converge at a larger global batch
    POWER = "power"
    INPUT = "input"  # the input pipeline (never modelled)
    LINK = "link"  # the link between devices
    STRATEGY = "strategy"  # the strategy the runs measured


class Source(StrEnum):
    """Where a term's value came from. ``GIVEN`` reads ``entered`` (the JSON's word)."""

    MEASURED = "measured"  # by the bench, from these results
    FITTED = "fitted"  # from other models' measurements
    GIVEN = "entered"  # given as an option
    PRIOR = "prior"  # a published or measured prior, with its citation
    ASSUMED = "assumed"  # a default


@dataclass(frozen=True, slots=True)
class BenchRun:
    """A ``gpuscale bench`` run that measures a term: ``model`` (None: the user's own
    file), ``nproc`` (device counts), ``config`` (the run's configuration options, said
    by the advised run's own where one is known), ``more`` (what measures the term, e.g.
    ``--steps 580``), ``run`` (the advised run's options in place of the model) and
    ``host_devices`` (the bench host's devices: a larger host is named where needed)."""

    model: str | None
    nproc: tuple[int, ...]
    config: str = ""
    more: str = ""
    run: str = ""
    host_devices: int | None = None

    def command(self) -> str:
        """```gpuscale bench --models M --nproc 1,2 --steps 580``` and where it runs."""
        nproc = ",".join(map(str, self.nproc))
        where = on_a_larger_host(max(self.nproc), self.host_devices)
        tail = "".join(f" {o}" for o in (self.config, self.more) if o)
        if self.run:  # the advised run's own configuration (and the file advised on)
            return f"`gpuscale bench {self.run} --nproc {nproc}{tail}`{where}"
        if self.model is None:
            return f"`{BENCH} --nproc {nproc}{tail}`{where}"
        option = "--models" if ":" not in self.model else "--model"
        return f"`gpuscale bench {option} {self.model} --nproc {nproc}{tail}`{where}"


# the command a user without a bench runs to measure a term of their own model
BENCH = "gpuscale bench --model FILE.py:FACTORY --batch B"


@dataclass(frozen=True, slots=True)
class Measure:
    """How to measure a term: words ``before`` a bench run (``bench``, None: words only)
    and ``after`` it. Empty where the term is measured; rendered once, by ``str``."""

    before: str = ""
    bench: BenchRun | None = None
    after: str = ""

    def __str__(self) -> str:
        return f"{self.before}{self.bench.command() if self.bench else ''}{self.after}"

    def __bool__(self) -> bool:
        return bool(self.before or self.bench or self.after)

    def in_words(self, said: str) -> Measure:
        """This measure with its bench run said as ``said`` instead."""
        return Measure(f"{self.before}{said}{self.after}")

    def around(self, before: str, after: str = "") -> Measure:
        """This measure with ``before`` and ``after`` said around it."""
        return Measure(f"{before}{self.before}", self.bench, f"{self.after}{after}")


def words(text: str) -> Measure:
    """A way to measure said in words only (an option to give, a tool to run)."""
    return Measure(text)
