"""The advice's vocabulary: a term of the step (``TermId``), its ``Source``, how to measure it
(``Measure``), a ``Finding`` about the inputs, a ``Refusal`` of bench runs, the runs set
against a prediction (``MeasuredCount``)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING, TypeVar

from gpuscale.bench.slurm import across_nodes
from gpuscale.plausibility import flag_kinds
from gpuscale.tables.advice import wide_factor
from gpuscale.tables.bench import on_a_larger_host
from gpuscale.tables.codes import Code

if TYPE_CHECKING:
    import pandas as pd


class TermId(Code):
    """A term of the step (or of the time to train) the advice prices."""

    FIXED = "fixed"  # fixed per micro-step: launches, the optimizer step
    FLOPS = "flops_per_sample"  # a sample's FLOPs, by numbers where not given
    DDP = "ddp"  # the strategy's own work (DDP's bucket copies, FSDP's)
    WAIT = "wait"  # for the slowest device
    BANDWIDTH = "bandwidth"  # exposed communication: its bandwidth part
    LATENCY = "latency"  # exposed communication: one latency per collective
    OVERLAP = "overlap"  # the share of communication backward hides
    CONVERGENCE = "convergence"  # samples to converge at a larger global batch
    INPUT = "input"  # the input pipeline (never modelled)
    LINK = "link"  # the link between devices
    INTER_NODE = "inter_node"  # the link between nodes (the NICs)
    LINK_CLASS = "link_class"  # the class of the published fits a preset is assumed to be of
    POWER = "power"  # watts per device, where they are an assumed device's board power
    UNEXPLAINED = "unexplained"  # a measured step less the model's terms


class Source(Code):
    """Where a term's value came from. ``GIVEN`` reads ``entered`` (the JSON's word)."""

    MEASURED = "measured"  # by the bench, from these results
    FITTED = "fitted"  # from other models' measurements
    GIVEN = "entered"  # given as an option
    PRIOR = "prior"  # a published or measured prior, with its citation
    ASSUMED = "assumed"  # a default


@dataclass(frozen=True, slots=True)
class BenchRun:
    """A ``gpuscale bench`` run that measures a term."""

    model: str | None  # None: the user's own file
    nproc: tuple[int, ...]
    config: str = ""  # the run's configuration options
    more: str = ""  # what measures the term, e.g. ``--steps 580``
    run: str = ""  # the advised run's options, in place of the model
    host_devices: int | None = None  # the bench host's: a larger host named where needed
    per_node: int | None = None  # devices a node: a count beyond one is benched across nodes

    def command(self) -> str:
        """The counts one node holds in one command; each beyond a node of ``per_node``
        across the nodes it needs, as the bench docs launch it (``slurm.across_nodes``)."""
        tail = "".join(f" {o}" for o in (self.config, self.more) if o)
        head = f"gpuscale bench {self.run}" if self.run else BENCH  # the advised run's own
        if self.model is not None and not self.run:
            option = "--models" if ":" not in self.model else "--model"
            head = f"gpuscale bench {option} {shlex.quote(self.model)}"  # a path's space quoted
        per_node = self.per_node or max(self.nproc)  # None: every count on one node
        nodes = [across_nodes(head, tail, n, per_node) for n in self.nproc]
        within = [n for n, command in zip(self.nproc, nodes, strict=True) if command is None]
        where = on_a_larger_host(max(within, default=0), self.host_devices)
        said = [f"`{head} --nproc {','.join(map(str, within))}{tail}`{where}"] * bool(within)
        return ", then ".join([*said, *filter(None, nodes)])


# a bench run's model from the user's own file, and the command that measures a term of it
OWN_MODEL = "FILE.py:FACTORY"
BENCH = f"gpuscale bench --model {OWN_MODEL} --batch B"


@dataclass(frozen=True, slots=True)
class Measure:
    """How to measure a term: words ``before`` and ``after`` a bench run (None: words only)
    or the file's runs to bench ``again`` in its place (``remeasure.again``); empty where
    measured."""

    before: str | Finding = ""
    bench: BenchRun | None = None
    after: str | Finding = ""
    again: Finding | None = None  # the file's runs to bench again, in place of ``bench``

    def __str__(self) -> str:  # its words where text; a finding's: ``phrasebook.measured``
        return "".join(map(str, self.parts()))

    def __bool__(self) -> bool:
        return bool(self.before or self.bench or self.after) or self.again is not None

    def parts(self, short: bool = False) -> tuple[str | Finding, ...]:
        """The words and the command in order (``short``: up to a bench run's command)."""
        run = maybe(BenchRun.command, self.bench) or self.again or ""
        whole = (self.before, run, self.after)
        return whole[:2] if short and self.bench else whole


def read_data(name: str) -> dict:
    """The package data file ``gpuscale/data/<name>``, a JSON object."""
    return json.loads((resources.files("gpuscale") / "data" / name).read_text("utf-8"))


# the findings' templates (``explain`` says them), a kind of finding per key
# (``transformer_shape``: ``FindingKind.TRANSFORMER_SHAPE``)
FINDINGS: dict[str, dict] = read_data("advice_findings.json")
FindingKind = Code(
    "FindingKind",
    [(kind.upper(), kind) for kind in FINDINGS if not kind.startswith("_")],
    module=__name__,
)


@dataclass(frozen=True, slots=True)
class Finding:
    """A ``kind`` of finding and the named values it is about."""

    kind: FindingKind
    values: tuple[tuple[str, Value], ...] = ()

    @classmethod
    def of(cls, kind: FindingKind, **values: Value) -> Finding:
        return cls(kind, tuple(values.items()))

    def __getitem__(self, name: str) -> Value:
        return dict(self.values)[name]

    def with_values(self, **values: Value) -> Finding:
        return Finding(self.kind, tuple((dict(self.values) | values).items()))

    def findings(self, name: str) -> tuple[Finding, ...]:
        """The findings the value ``name`` holds (a link's ``rings``); none where unsaid."""
        value = self[name]
        return tuple(f for f in value if isinstance(f, Finding)) if isinstance(value, tuple) else ()

    def size(self, name: str) -> int:
        """How many items the value ``name`` holds (a ring's ``gpus``); 0 where unsaid."""
        value = self[name]
        return len(value) if isinstance(value, tuple) else 0


# what a finding is about: a number, a name, a flag, numbers, sentences and findings, or how
# to measure a term (``Measure``: ``explain`` says its parts)
Words = tuple[str | Finding, ...]
Value = float | int | str | bool | tuple[float, ...] | Words | Finding | Measure | None


@dataclass(frozen=True, slots=True)
class Reading:
    """One end (``low``, ``high``) of an assumed term's range (``flops_per_sample``,
    ``fixed_cost``, ``link``) and the count chosen there, with its speedup; a link's end is
    a preset, its latency beside its bandwidth (two presets of one bandwidth differ by it)."""

    term: str
    end: str
    value: float
    unit: str
    accelerators: int
    speedup: float
    preset: str | None = None  # a link's end (None: another term)
    latency_us: float | None = None
    # the count advised, at a speedup outside its 80% interval: the range moves the time
    beyond_interval: bool = False


# why the search stopped at the largest count (a Decision's ``cap``): the most allowed
# reached, the global batch kept not split over a count above, or its row flagged
STOPPED = ("devices", "batch", "flagged")
R = TypeVar("R")


def maybe(f: Callable[..., R], value: object, *args: object) -> R | None:
    if value is None:
        return None
    return f(value, *args)


Broken = tuple[tuple[str, tuple[int, ...]], ...]  # models, each with its counts
Flags = tuple[tuple[str, int, str], ...]  # kind, runs, an example reason


class RefusalKind(Code):
    """Why the bench runs refuse an advice, each rendered by ``explain/caveats.py``."""

    BROKEN = "broken"  # the model asked, or every model, has a loss not finite
    ALL_FAILED = "all_failed"  # every run of the model asked failed
    NOT_IN_FILE = "not_in_file"  # the model asked is not in the file
    COLUMNS_MISSING = "columns_missing"  # a table that is no bench table


@dataclass(frozen=True, slots=True)
class Refusal:
    """``where``: the results file ("": a table given, not read); ``names``: the file's
    models or the columns missing; ``broken``: each model's counts
    whose loss was not finite; where every run failed, how many, the last one's status and
    error."""

    kind: RefusalKind
    where: str = ""
    model: str = ""
    names: tuple[str, ...] = ()
    broken: Broken = ()
    runs: int = 0
    status: str = ""
    error: str = ""


@dataclass(frozen=True, slots=True)
class LeftOut:
    """The flagged ``ok`` runs a refusal's bench left out and their flags ((kind, runs,
    an example)), said only where one was an N = 1 run (``single``); the unflagged runs a
    flagged longer run of their configuration and count outlasted (``outlasted``)."""

    left: int = 0
    single: bool = False
    flags: Flags = ()
    broken: Broken = ()
    outlasted: int = 0

    def __bool__(self) -> bool:
        return self.single or bool(self.broken)


@dataclass(frozen=True, slots=True)
class Measured:
    """A bench run's throughput speedup at ``devices`` over its N = 1 run's step of
    ``basis``, the one the prediction's N = 1 row models (like divided by like)."""

    devices: int
    speedup: float
    flagged: bool
    batch_per_device: int
    allowed: bool = False  # flagged, yet used (--allow-flagged)
    accum: int = 1
    base: tuple[int, int] | None = None  # the N = 1 run's (batch, accum); None: its own
    weak_remedy: str = ""  # what to bench where it or its N = 1 run is weak evidence
    samples_per_s: float = float("nan")  # the run's, all devices (NaN: not known)
    flags: str = ""  # the bench's flags of the run ("" where none)
    basis: str = "bare"  # the one-device step divided by (bench_scaling.SPEEDUP_BASES)


@dataclass(frozen=True, slots=True)
class MeasuredCount:
    """The runs at one count in a configuration the advice predicts, set against that
    prediction; where the median lies outside the interval the row rests on it."""

    accelerators: int
    batch_per_device: int
    accum: int
    base: tuple[int, int]  # (per-device batch, accumulation) of the N = 1 run read against
    predicted_speedup: float
    predicted_low: float
    predicted_high: float
    weak_scaling: bool  # the prediction is the weak-scaling alternative's
    runs: tuple[Measured, ...]  # every run at the count in that configuration
    trusted: tuple[Measured, ...]  # unflagged, or flagged and allowed
    speedups: tuple[float, ...]  # of each of ``runs``, against its N = 1 run
    measured_speedup: float  # the median of the runs used
    inside: bool  # within the predicted 80% interval
    basis: tuple[str, ...]  # the runs' N = 1 steps, the prediction's (SPEEDUP_BASES ids)

    def of(self, runs: tuple[Measured, ...]) -> list[float]:
        return [v for m, v in zip(self.runs, self.speedups, strict=True) if m in runs]

    @property
    def used(self) -> tuple[Measured, ...]:
        return self.trusted or self.runs  # all flagged: every run

    @property
    def left_out(self) -> tuple[Measured, ...]:
        return tuple(m for m in self.runs if self.trusted and m.flagged and not m.allowed)

    @property
    def left_speedups(self) -> tuple[float, ...] | None:  # None: none left out
        return tuple(self.of(self.left_out)) or None

    @property
    def allowed_flagged(self) -> int:
        """How many of the runs read are flagged, read with --allow-flagged (said with the
        runs: "from 2 runs (1 flagged, used with --allow-flagged)")."""
        return sum(m.allowed for m in self.used)

    @property
    def measured_low(self) -> float | None:  # None: one run
        return None if len(self.used) == 1 else min(self.of(self.used))

    @property
    def measured_high(self) -> float | None:
        return None if len(self.used) == 1 else max(self.of(self.used))

    @property
    def no_interval(self) -> str:
        if len(self.used) == 1:
            return "one run: its value, no spread to read an interval from"
        return ""

    @property
    def why(self) -> str:
        """``unflagged``, ``allowed_flagged`` (--allow-flagged) or ``flagged_only``."""
        if any(m.allowed for m in self.trusted):
            return "allowed_flagged"
        return "unflagged" if self.trusted else "flagged_only"

    @property
    def on_flagged_only(self) -> bool:
        return not self.trusted

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(m.flags for m in self.runs if m.flagged and m.flags))

    @property
    def flag_kinds(self) -> tuple[str, ...]:
        """The kinds of the flagged runs' flags, each once: what the answer names (the
        reasons in full are the bench table's and the JSON's)."""
        return tuple(dict.fromkeys(kind for flags in self.flags for kind in flag_kinds(flags)))

    @property
    def weak_evidence(self) -> str:
        return next((m.weak_remedy for m in self.used if m.weak_remedy), "")

    @property
    def wide_factor(self) -> float | None:
        return wide_factor(self.predicted_low, self.predicted_high)


def trusted_runs(table: pd.DataFrame) -> pd.DataFrame:
    return table[(table["status"] == "ok") & ~table["flagged"].fillna(False).astype(bool)]


def metered(runs: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """``runs`` less those whose power meter dropped out (the bench table's ``energy_flag``:
    their energy and power are no measurement), and how many those were."""
    if "energy_flag" not in runs:  # a table of an earlier gpuscale
        return runs, 0
    flagged = runs["energy_flag"].fillna("").astype(bool)
    return runs[~flagged], int(flagged.sum())
