"""The advice's vocabulary, as data: a term of the step (``TermId``), where its value came
from (``Source``), how to measure it (``Measure``), what was found about the inputs
(``Finding``), why bench runs were refused (``Refusal``)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

from gpuscale.bench.evidence import STEPS_FIX
from gpuscale.quantities import counted, joined
from gpuscale.tables.bench import on_a_larger_host
from gpuscale.tables.codes import Code

if TYPE_CHECKING:
    from gpuscale.bench.support import Support


class TermId(Code):
    """A term of the step (or of the time to train) the advice prices."""

    FIXED = "fixed"  # fixed per micro-step: launches, the optimizer step
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

    def command(self) -> str:
        nproc = ",".join(map(str, self.nproc))
        where = on_a_larger_host(max(self.nproc), self.host_devices)
        tail = "".join(f" {o}" for o in (self.config, self.more) if o)
        if self.run:  # the advised run's own configuration (and the file advised on)
            return f"`gpuscale bench {self.run} --nproc {nproc}{tail}`{where}"
        if self.model is None:
            return f"`{BENCH} --nproc {nproc}{tail}`{where}"
        option = "--models" if ":" not in self.model else "--model"
        spec = shlex.quote(self.model)  # a shell word: a file path may hold a space
        return f"`gpuscale bench {option} {spec} --nproc {nproc}{tail}`{where}"


# The model a bench run of the user's own file times, and the command a user without a
# bench runs to measure a term of it
OWN_MODEL = "FILE.py:FACTORY"
BENCH = f"gpuscale bench --model {OWN_MODEL} --batch B"


@dataclass(frozen=True, slots=True)
class Measure:
    """How to measure a term: words ``before`` and ``after`` a bench run (None: words
    only); empty where measured."""

    before: str = ""
    bench: BenchRun | None = None
    after: str = ""

    def __str__(self) -> str:
        return f"{self.before}{maybe(BenchRun.command, self.bench) or ''}{self.after}"

    def __bool__(self) -> bool:
        return bool(self.before or self.bench or self.after)

    def short(self) -> str:
        return f"{self.before}{self.bench.command()}" if self.bench else str(self)


def bench_run(
    model: str | None, counts: tuple[int, ...], host_devices: int | None = None, run: str = ""
) -> Measure:
    return Measure(bench=BenchRun(model, counts, run=run, host_devices=host_devices))


def rerun(found: Support, counts: tuple[int, ...], host_devices: int | None) -> str:
    more = f"--steps {found.steps_needed}"
    return BenchRun(found.model, counts, "", more, found.run, host_devices).command()


def again(found: Support | None, counts: tuple[int, ...], host_devices: int | None = None) -> str:
    """Where the file holds runs of the model at every count of ``counts``: how to bench
    them again (more steps where they fix a weakness, else a quieter machine)."""
    if found is None or not counts or not set(counts) <= set(found.counts):
        return ""
    on = f"{found.model or 'the model'} on {joined(counts)} device{'s' * (counts != (1,))}"
    if more_steps(found):
        command = rerun(found, counts, host_devices)
        return f"the file holds runs of {on} already: {found.remedy()}: {command}"
    held = f"the file holds runs of {on} already, the longest of {found.most_steps} steps"
    if found.flagged:
        held += f" ({counted(found.flagged, 'run')} of them flagged, left out of the advice)"
    firm = not found.kinds and not found.flagged
    quieter = "on a quieter machine, nothing else running (more steps do not narrow a spread)"
    return f"{held}: bench them again {quieter}{', and read their spread (--repeat 3)' * firm}"


def more_steps(found: Support) -> bool:
    """Whether more steps than any run of the file timed would firm ``found`` up."""
    return found.steps_needed > (found.most_steps or 0) and STEPS_FIX in found.fixes


def as_run(
    measure: Measure, found: Support | None, host_devices: int | None, any_run: bool = False
) -> Measure:
    """``measure`` where it is a bench run of ``found``'s model (``any_run``: of any model,
    at any steps): at counts the file holds, :func:`again`; else the advised run's own
    command, ``more`` kept."""
    bench = measure.bench
    if found is None or bench is None:
        return measure
    same = bench.model == found.model
    if any_run or (same and found.counts and not bench.config and not bench.more):
        held = again(found, bench.nproc, host_devices)
        if held:
            return Measure(f"{measure.before}{held}{measure.after}")
    if not same:
        return measure
    run = BenchRun(found.model, bench.nproc, more=bench.more, run=found.run)
    return replace(measure, bench=replace(run, host_devices=host_devices))


class FindingKind(Code):
    """What was found about the inputs, each rendered by ``data/advice_findings.json``."""

    RATE_ABOVE_PEAK = "rate_above_peak"  # above the device's highest (bf16) peak
    RATE_ABOVE_EVERY_PEAK = "rate_above_every_peak"  # unknown device: above the fastest
    RATE_UNDER_FLOOR = "rate_under_floor"  # under ``MIN_MFU`` of the device's peak
    STEP_SHAPE = "step_shape"  # the step against the batch, fitted to measured batches
    STEP_ONE_BATCH = "step_one_batch"  # no shape: one batch measured, or none
    MEMORY_FIT = "memory_fit"  # the largest batch from bytes per sample fitted
    MEMORY_BOUND = "memory_bound"  # the largest batch from one batch's peak (a bound)
    CALIBRATED_ON = "calibrated_on"  # the bench model calibrated on, and its notes
    FLOPS_NOT_COUNTED = "flops_not_counted"  # a run without FLOPs: 6 x parameters
    OTHER_HARDWARE_LEFT_OUT = "other_hardware_left_out"  # runs of another configuration
    COMPUTE_FROM = "compute_from"  # how the compute was split (its note)
    COMPUTE_OWN_BATCHES = "compute_own_batches"  # from the model's own batches
    OVERLAP_OF_OTHERS = "overlap_of_others"  # the other models' median overlap
    # refusals: what the bench results cannot calibrate
    NO_SINGLE_RUN_OF = "no_single_run_of"
    NOTHING_MEASURED = "nothing_measured"
    NO_SINGLE_RUN = "no_single_run"
    NO_TRUSTED_SINGLE_RUN = "no_trusted_single_run"
    FIXED_NOT_BELOW_STEP = "fixed_not_below_step"
    SWEEP_OF_CPU = "sweep_of_cpu"  # a collectives sweep of CPU processes, a GPU model
    COMPUTE_OF_NUMBERS = "compute_of_numbers"  # the step given, its rate and its split
    FAMILY_RATE = "family_rate"  # a family's FLOPs per parameter, as measured
    FAMILY_CHOSEN = "family_chosen"  # the family of a --params model, and its member
    ADOPTED = "adopted"  # a --params model advised from its family's calibration
    NO_SINGLE_RUN_FOR_FAMILY = "no_single_run_for_family"
    NO_SINGLE_RUN_OF_FAMILY = "no_single_run_of_family"
    FAMILY_NEEDED = "family_needed"
    ACCUMULATED = "accumulated"  # a run that accumulated gradients, read per micro-batch
    CONFIGURATIONS = "configurations"  # a model benched in several configurations
    FELL = "fell"  # a slowdown below one measured at fewer devices
    CONTENTION_FELL = "contention_fell"  # the bench measured less contention at more devices
    CONTENTION_FROM = "contention_from"  # where the contention at N > 1 was read
    NO_SYNC_AT = "no_sync_at"  # the no-sync step's slowdown at a count
    BEYOND_BATCH = "beyond_batch"  # a per-device batch far beyond the one the bench timed
    LINK_CUSTOM = "link_custom"  # the link as given: a custom one
    LINK_PRESET = "link_preset"  # the link as given: a preset
    LINK_DETECTED = "link_detected"  # the detected topology's slowest pair
    # a transformer's shape (``hardware.transformer``): what it gives, --params against it,
    # and what a sharded strategy assumes without one
    TRANSFORMER_SHAPE = "transformer_shape"
    PARAMS_NOT_SHAPE = "params_not_shape"
    NO_SHAPE = "no_shape"
    LINK_NOT_OF_DEVICE = "link_not_of_device"  # an NVLink preset the device named has not
    LINK_CURVES = "link_curves"  # measured collectives, and the link fitted to them
    STRATEGY_AS_BENCHED = "strategy_as_benched"  # none asked: the strategy the runs measured
    OTHER_STRATEGY = "other_strategy"  # a strategy predicted other than the runs measured
    LINK_OF_BENCH_HOST = "link_of_bench_host"  # the link the bench host's topology records
    LINK_OF_PROCESSES = "link_of_processes"  # CPU processes: no preset, one assumed
    BETWEEN_NODES = "between_nodes"  # the NICs between nodes
    ONE_GPU = "one_gpu"  # a topology of one GPU
    TOPOLOGY_CAP = "topology_cap"  # the count capped at the topology's GPUs
    NODES_SPILL = "nodes_spill"  # more devices asked than the nodes given hold
    PROCESSES_CAP = "processes_cap"  # CPU processes capped at the host's cores
    PROCESSES_ABOVE = "processes_above"  # counts asked above what the host runs
    STEP_EXTRAPOLATED = "step_extrapolated"  # the step's interval: nothing at N > 1
    STEP_OVER_PRIORS = "step_over_priors"  # the priors' ranges, and the rest's width
    STEP_LEFT_OUT = "step_left_out"  # from leave-one-out predictions
    STEP_OWN_RUNS = "step_own_runs"  # the calibrated model against its own N > 1 runs
    INTERVAL_CALIBRATED = "interval_calibrated"  # the speedup's interval per link class
    INTERVAL_CLASS = "interval_class"  # one link class's calibrated widths
    BATCH_NOT_SPLIT = "batch_not_split"  # a global batch no one device can take
    NOTHING_PLAUSIBLE = "nothing_plausible"  # every prediction failed its checks
    SHAPE_NEEDS_BATCHES = "shape_needs_batches"  # a shape fitted to fewer than two batches
    FIXED_BOUNDED = "fixed_bounded"  # the fixed cost raised by the step's work at the peak
    FIXED_UNBOUNDED = "fixed_unbounded"  # the prior's fixed cost, no peak to bound it
    FLOPS_TWO_READINGS = "flops_two_readings"  # 6 x parameters: a token's, or more work
    STEP_UNDER_KERNELS = "step_under_kernels"  # shorter than a step's fewest kernels
    PEAK_UNCHECKED = "peak_unchecked"  # a named device without a known peak
    CEILING = "ceiling"  # the TFLOP/s a device's work cannot beat, and whose it is
    FIXED_SLOPE = "fixed_slope"  # the plain steps' slope splits a step the peak cannot
    FIXED_LAUNCH_FLOOR = "fixed_launch_floor"  # a step the peak cannot split: a floor


# what a finding is about: a number, a name, a flag, numbers, or sentences and findings
Value = float | int | str | bool | tuple[float, ...] | tuple["str | Finding", ...] | None


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


@dataclass(frozen=True, slots=True)
class Reading:
    """One end (``low``, ``high``) of an assumed term's range (``flops_per_sample``,
    ``fixed_cost``, ``link``) and the count chosen there, with its speedup."""

    term: str
    end: str
    value: float
    unit: str
    accelerators: int
    speedup: float


# Why the search stopped at the largest count predicted, as a Decision's ``cap``: the most
# allowed reached, the global batch kept not split over a count above, or its row flagged.
STOPPED = ("devices", "batch", "flagged")
R = TypeVar("R")


def maybe(f: Callable[..., R], value: object, *args: object) -> R | None:
    if value is None:
        return None
    return f(value, *args)


class RefusalKind(Code):
    """Why the bench runs refuse an advice, each rendered by ``explain/runs.py``."""

    BROKEN = "broken"  # the model asked, or every model, has a loss not finite
    ALL_FAILED = "all_failed"  # every run of the model asked failed
    NOT_IN_FILE = "not_in_file"  # the model asked is not in the file
    COLUMNS_MISSING = "columns_missing"  # a table that is no bench table


@dataclass(frozen=True, slots=True)
class Refusal:
    """A refusal of the bench runs: ``names``, the file's models or the columns missing;
    ``broken``, each model's counts whose loss was not finite; where every run failed, how
    many and the last one's status and error."""

    kind: RefusalKind
    where: str = ""
    model: str = ""
    names: tuple[str, ...] = ()
    broken: tuple[tuple[str, tuple[int, ...]], ...] = ()
    runs: int = 0
    status: str = ""
    error: str = ""


@dataclass(frozen=True, slots=True)
class LeftOut:
    """The flagged ``ok`` runs a refusal's bench left out and their flags ((kind, runs,
    an example)), said only where one was an N = 1 run (``single``)."""

    left: int = 0
    single: bool = False
    flags: tuple[tuple[str, int, str], ...] = ()
    broken: tuple[tuple[str, tuple[int, ...]], ...] = ()

    def __bool__(self) -> bool:
        return self.single or bool(self.broken)
