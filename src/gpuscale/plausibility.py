"""Which measured numbers cannot be trusted, and why: the rules, in one place.

A number that cannot be true is flagged where it is made, with a reason people can act
on, and flagged rows are kept out of advice and findings unless asked for. Used by the
bench worker (what one run can tell about itself) and the bench analysis (what needs the
one-device run too). Pure functions; thresholds documented here.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TypeAlias

from gpuscale.quantities import number
from gpuscale.sizes import number_or_none

# A part of a bench record (its timing, host or noise), as read from its JSON line: each
# value is checked where it is read (a missing or non-finite one flags nothing).
Record: TypeAlias = Mapping[str, object]


class FlagKind(str, Enum):
    """The kind of a bench row's flag: what each reason says is wrong. A row's ``flags``
    hold the reasons in words ("; "-separated, each ``kind: detail``); its
    ``flag_kinds`` hold their kinds as data (:func:`flag_kinds`), read by code.

    A ``str`` and an ``Enum`` (``enum.StrEnum`` is Python 3.11's): a member equals its
    value and is written as it, by ``str()`` and in an f-string alike, on 3.10 as on 3.11
    (which would otherwise format a mixed-in member as ``FlagKind.BUSY``)."""

    SAME_SAMPLES = "the ranks saw the same samples (identical gradients on every rank)"
    NO_WARMUP = "no warm-up"
    NOISY_SYNC = "noisy synchronised steps"
    NOISY_NOSYNC = "noisy no-sync steps"
    REPEATS = "repeats disagree"
    NOSYNC_SLOWER = "no-sync steps slower than synchronised ones"
    LOSS = "loss not finite"
    BUSY = "machine busy"
    QUEUED = "host oversubscribed"
    STEAL = "CPU steal"
    ONE_RANK_FASTER = "DDP's one-rank step faster than the plain step"
    SUPERLINEAR = "super-linear"
    NO_ONE_DEVICE = "no N = 1 run"
    SYNC_WAIT = "sync overhead exceeds the communication in flight"
    BASELINE = "N = 1 run flagged"
    NO_BASELINE = "no N = 1 run of the same configuration (threads, batch, precision...)"
    ABOVE_PEAK = "above the device's peak"
    SAMPLES_UNDER_BATCH = "samples under batch"

    def __str__(self) -> str:
        return str(self.value)


# Kinds whose reason's first words carry a number (the text before its colon is no kind).
_KIND_STARTS = (
    ("no-sync steps ", FlagKind.NOSYNC_SLOWER),
    ("DDP's one-rank step measured ", FlagKind.ONE_RANK_FASTER),
    ("FSDP's one-rank step measured ", FlagKind.ONE_RANK_FASTER),  # the same, of an FSDP run
    ("sync overhead exceeds ", FlagKind.SYNC_WAIT),
    ("N = 1 run flagged", FlagKind.BASELINE),
)
# What clears each kind of flag before its runs are benched again: the one mapping every
# message saying how to clear a flag reads (a refusal's, a count measured on flagged runs
# only), in the words of the flag's own reason where it says one. A noisy host's kinds (busy,
# stolen, a spread or repeats no quieter machine would give) are cleared by a quieter one;
# timings that cannot be true of one machine (a faster one-rank step, super-linear scaling)
# by more steps there too; an N = 1 run's flag (BASELINE) by that run's own kinds' remedies.
QUIETER = "run on a quieter machine, nothing else running"
REMEDIES: dict[FlagKind, str] = {
    FlagKind.SAME_SAMPLES: "draw per-rank data, e.g. from torch's default generator, which "
    "gpuscale seeds per rank",
    FlagKind.NO_WARMUP: "run --warmup 1 or more",
    FlagKind.NOISY_SYNC: QUIETER,
    FlagKind.NOISY_NOSYNC: QUIETER,
    FlagKind.REPEATS: QUIETER,
    FlagKind.NOSYNC_SLOWER: QUIETER,
    FlagKind.LOSS: "check its loss and learning rate",
    FlagKind.BUSY: QUIETER,
    FlagKind.QUEUED: QUIETER,  # its own reason names the --threads that fit, too
    FlagKind.STEAL: QUIETER,
    FlagKind.ONE_RANK_FASTER: "run more --steps on a quieter machine",
    FlagKind.SUPERLINEAR: "run more --steps on a quieter machine",
    FlagKind.NO_ONE_DEVICE: "bench an N = 1 run too (--nproc 1,N)",
    FlagKind.SYNC_WAIT: QUIETER,  # the slowest rank waited for, or noise
    FlagKind.NO_BASELINE: "bench an N = 1 run of the same configuration",
    FlagKind.ABOVE_PEAK: "check the step times, the FLOPs per sample and the device named",
    FlagKind.SAMPLES_UNDER_BATCH: "give make_batch more samples, or a smaller --batch",
}
# Kinds a noisy host raises (re-run quieter, or allow them with a warning).
HOST_NOISE = frozenset(kind for kind, remedy in REMEDIES.items() if remedy == QUIETER)


def remedies(kinds: Iterable[str]) -> list[str]:
    """The remedies (:data:`REMEDIES`) of ``kinds`` (a row's ``flag_kinds``), each once, in
    order, a quieter machine last (where a command follows, it is run there); a kind this
    version does not know (its own words) has none, nor has BASELINE."""
    known = {kind.value: remedy for kind, remedy in REMEDIES.items()}  # read by value
    found = dict.fromkeys(known[str(k)] for k in kinds if str(k) in known)
    return sorted(found, key=lambda remedy: remedy == QUIETER)


def flag_reasons(flags: object) -> list[str]:
    """The reasons of a row's ``flags`` ("; "-separated; a reason's own advice after
    "; ", ``run ...``, kept with it): the one reader of the column's format."""
    reasons: list[str] = []
    for part in filter(None, (p.strip() for p in str(flags or "").split("; "))):
        if reasons and part.startswith("run "):
            reasons[-1] += f"; {part}"
        else:
            reasons.append(part)
    return reasons


def kind_of(reason: str) -> str:
    """A reason's :class:`FlagKind` (its value), read once where a table is built: the
    text before its first colon, or the kind its first words name; a kind this version
    does not know keeps its own words."""
    for start, kind in _KIND_STARTS:
        if reason.startswith(start):
            return kind.value
    return reason.split(":", 1)[0]


def detail(reason: str) -> str:
    """A reason's words after its kind (``kind: detail``); the whole reason where its
    kind does not start it (its first words carry a number)."""
    _, sep, rest = reason.partition(": ")
    return rest if sep and reason.startswith(kind_of(reason)) else reason


def flag_kinds(flags: object) -> tuple[str, ...]:
    """The kinds of a row's ``flags``, each once, in order."""
    return tuple(dict.fromkeys(kind_of(r) for r in flag_reasons(flags)))


# Efficiency above this is super-linear scaling: on one machine, a measurement error
# (different threads, a busy core, a cold cache), not a finding.
SUPERLINEAR_EFFICIENCY = 1.1
# E' (or a planned speedup over the devices added) within this of 1 is linear: less than the
# run-to-run spread of an olympic average (MLPerf's), never said as more than linear.
LINEAR_SPREAD = 0.005
# Step times whose 95th percentile exceeds the median by this factor are too noisy.
NOISY_P95_OVER_P50 = 1.5
# The fewest timed steps whose p95 one slow step cannot set: numpy's p95 of n values lies
# 0.95 (n - 1) along them, past the second slowest (towards the slowest) below 21. Under
# it a p95 over the median is one slow step as likely as a spread, the few-steps and
# spread weaknesses' to say (``bench.evidence``), not a noise that distrusts the run.
NOISY_MIN_STEPS = 21
# The flags a spread of step times raises (judged over NOISY_MIN_STEPS or more only).
NOISY_KINDS = frozenset({FlagKind.NOISY_SYNC.value, FlagKind.NOISY_NOSYNC.value})


def too_few_for_noise(steps: object) -> bool:
    """Whether a run that timed ``steps`` timed fewer than :data:`NOISY_MIN_STEPS`: its
    p95 may be its slowest step or the next, so its spread cannot tell noise from one slow
    (warm-up) step (None, not recorded: judged as enough)."""
    timed = number_or_none(steps)
    return timed is not None and timed < NOISY_MIN_STEPS


# --repeat runs of one configuration whose throughputs span more than this share of the
# median did not measure one machine state (e.g. 185 and 2,046 samples/s).
REPEAT_SPREAD = 0.25
# Share of the host's CPU time other processes used during the timed phase.
BUSY_OTHER_SHARE = 0.10
# Share of the host's CPU time the hypervisor stole.
STEAL_SHARE = 0.05
# The host's CPU time (/proc/stat, and the ranks' own from os.times) counts in clock
# ticks (SC_CLK_TCK: 100 a second and core on Linux), so a share read over a phase of a
# few milliseconds is a ratio of a handful of ticks (2/3, 1/4): the tick it started in,
# not the host's load. Over 1 s a core counts 100 ticks, so one tick either way is at most
# 1% of its time, a tenth of BUSY_OTHER_SHARE: a share read over that long may flag a run.
# Read over less it is not measured (None in the record, NaN in the table, never 0) and
# flags nothing; the evidence grade says so (``gpuscale.bench.evidence``).
MIN_BUSY_WINDOW_S = 1.0
# DDP's one-rank step can cost more than the plain step, never less: beyond this share
# faster, the difference is noise.
ONE_RANK_FASTER = 0.05
# A no-sync step this much slower than a synchronised one is noise, not a measurement.
NEGATIVE_SYNC_SHARE = 0.10


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


# Relative difference under which two squared gradient norms are the same number.
SAME_NORM = 1e-6


def same_samples(local_sq: list[list[float]], global_sq: list[float]) -> bool:
    """Whether every rank computed the same gradient at every measured step: each rank's
    squared norm equal to every other's and to the all-reduced one's (within
    ``SAME_NORM``). Ranks drawing their own samples never agree to six digits; ranks
    whose batch function seeds its own generator alike always do."""
    steps = list(zip(*local_sq, global_sq, strict=True)) if global_sq else []
    finite = [s for s in steps if all(math.isfinite(v) for v in s)]
    if not finite:
        return False
    return all(max(s) - min(s) <= SAME_NORM * max(abs(v) for v in s) for s in finite)


# Why a run whose ranks computed identical gradients is flagged, and what to do.
SAME_SAMPLES = (
    f"{FlagKind.SAME_SAMPLES}: {REMEDIES[FlagKind.SAME_SAMPLES]} (the noise scale is not reported)"
)


def above(ratio: float, threshold: float = NOISY_P95_OVER_P50) -> str:
    """``ratio`` with the fewest decimals (1 to 4) that show it above ``threshold``: a
    flag never reads "1.5x (> 1.5x)"."""
    for decimals in range(1, 5):
        shown = f"{ratio:.{decimals}f}"
        if float(shown) > threshold:
            return shown
    return shown


# The one-off set-up a first step holds, by strategy: DDP rebuilds its buckets after its
# first backward; FSDP2 initialises lazily at its first forward (its streams and state),
# and its first all-gather sets up its buffers (and, on NCCL, the communicator, which
# DDP's constructor already used).
_SET_UP = {
    "ddp": "DDP's bucket rebuild",
    "fsdp": "FSDP's lazy initialisation and first all-gather",
}


def no_warmup(strategy: object = "ddp") -> str:
    """The flag of a run timed with no untimed step first (its first timed step holds the
    one-off set-up), in the words of its ``strategy`` (unknown: DDP's, the default)."""
    set_up = _SET_UP.get(str(strategy), _SET_UP["ddp"])
    return (
        f"{FlagKind.NO_WARMUP}: the first timed step holds one-off set-up (allocation, "
        f"{set_up}, kernel selection), charged to the synchronised step: "
        f"{REMEDIES[FlagKind.NO_WARMUP]}"
    )


NO_WARMUP = no_warmup()  # a DDP run's


@dataclass(frozen=True, slots=True)
class CpuUse:
    """How a run's ranks computed on its host's CPU cores: threads per rank, ranks on
    the host, the host's cores (what a busy host's remedy is read from)."""

    threads: int
    ranks: int
    cores: int


def _count(value: object) -> int | None:
    count = number_or_none(value, whole=True)
    return count if count is not None and count > 0 else None


def cpu_use(config: Record, environment: Record | None) -> CpuUse | None:
    """A run's :class:`CpuUse` from its record's ``config`` and ``environment``: ranks on
    a host as recorded (``ranks_on_host``: every node launched on it), else its world size
    over its nodes; None where its ranks ran on GPUs or a number is not recorded."""
    environment = environment or {}
    threads, world = _count(config.get("threads")), _count(config.get("accelerators"))
    nodes, cores = _count(config.get("nnodes")) or 1, _count(environment.get("cpu_count"))
    if config.get("device") != "cpu" or threads is None or world is None or cores is None:
        return None
    ranks = _count(environment.get("ranks_on_host")) or max(1, world // nodes)
    return CpuUse(threads, ranks, cores)


# Samples to converge this many times below or above what the references needed, or the
# median of the round's other submitters, are in another unit or mislogged: the RCPs of
# a workload span a factor of 2-3 over its batch sizes (BERT 2.6M-5.5M samples, ResNet
# 35-86 epochs), a unit mix-up a factor of 100 or more (3D U-Net: 168 samples an epoch;
# BERT logged as 1 epoch instead of ~2.5M samples).
SAMPLES_TO_CONVERGE_FACTOR = 10.0


def run_flags(
    timing: Record,
    host: Record | None,
    noise: Record | None = None,
    *,
    warmup: int | None = None,
    cpu: CpuUse | None = None,
    strategy: object = "ddp",
    steps: object = None,
) -> list[str]:
    """Reasons to distrust one run, from its own timing, host samples and gradient norms,
    and its ``warmup`` (untimed steps; 0 flags it, None: not recorded, said as its
    ``strategy`` sets up); ``cpu``: how its ranks used the host's cores, for a busy host's
    remedy (:func:`host_flags`); ``steps``: the steps it timed (under
    :data:`NOISY_MIN_STEPS` its p95 raises no noisy flag; None: not recorded)."""
    flags = [SAME_SAMPLES] if noise and _duplicated(noise) else []
    if warmup == 0:  # the cold first step is timed and weighs on every mean
        flags.append(no_warmup(strategy))
    phases = (("step_ms", "synchronised"), ("nosync_step_ms", "no-sync"))
    if too_few_for_noise(steps):
        phases = ()  # its p95 is its slowest step or the next: not a spread to judge
    for kind, label in phases:
        p50, p95 = timing.get(f"{kind}_p50"), timing.get(f"{kind}_p95")
        if _finite(p50) and _finite(p95) and p50 > 0 and p95 / p50 > NOISY_P95_OVER_P50:
            flags.append(
                # no "; " inside (a row's flags are "; "-separated); as bench.evidence
                # says: more steps measure a spread, they do not narrow it
                f"noisy {label} steps: p95 {number(p95)} ms is {above(p95 / p50)}x the median "
                f"(> {NOISY_P95_OVER_P50}x), a spread more steps do not narrow: {QUIETER}"
            )
    spread = timing.get("repeat_spread")
    if _finite(spread) and spread > REPEAT_SPREAD:
        rates = ", ".join(number(r) for r in timing.get("repeat_samples_per_s") or ())
        flags.append(
            f"{FlagKind.REPEATS}: {rates} samples/s span {spread:.0%} of the median "
            f"(> {REPEAT_SPREAD:.0%}), the host changed between them: {QUIETER}"
        )
    step, overhead = timing.get("step_ms_mean"), timing.get("sync_overhead_ms")
    if _finite(step) and _finite(overhead) and step > 0 and -overhead / step > NEGATIVE_SYNC_SHARE:
        flags.append(
            f"no-sync steps {number(-overhead)} ms slower than synchronised ones: noise larger "
            "than what synchronisation costs"
        )
    return flags + host_flags(host, cpu) + queued_flags(host, cpu)


def distinct_at_batch(drawn: int) -> float:
    """The distinct samples expected among ``drawn`` drawn uniformly, with replacement,
    from a dataset of as many samples: ``G (1 - (1 - 1/G)^G)``, about ``(1 - 1/e) G`` (0.632
    G; 5.25 of 8). Fewer distinct samples than that say the dataset the draws came from is
    smaller than the batch; more are what draws from a larger one give (a sample drawn twice
    from 50,000 in a batch of 2,048 is as likely as not)."""
    return drawn * (1 - (1 - 1 / drawn) ** drawn)


def samples_flags(data: Record | None) -> list[str]:
    """The flag of a run whose step's global batch came from fewer samples than it holds:
    of ``samples_drawn`` (each rank's micro-batch once, per-device batch x N) fewer are
    distinct (``samples_distinct``) than draws from a dataset the size of the batch give
    (:func:`distinct_at_batch`), as where ``make_batch`` draws from a dataset smaller than
    the global batch, which weak scaling grows with N. The ranks then train on the same
    samples in part: their gradients agree more than data-parallel training's, the noise
    scale reads low, and the run is no measurement of training on its global batch. None
    where either count is missing (rows written before it, a batch of other objects)."""
    drawn = number_or_none((data or {}).get("samples_drawn"), whole=True)
    distinct = number_or_none((data or {}).get("samples_distinct"), whole=True)
    if drawn is None or distinct is None or drawn < 1 or distinct >= distinct_at_batch(drawn):
        return []
    return [
        f"{FlagKind.SAMPLES_UNDER_BATCH}: {number(distinct)} distinct samples in a global "
        f"batch of {number(drawn)} (per-device batch x N), under the "
        f"{number(distinct_at_batch(drawn))} that draws from as many samples give: make_batch "
        f"draws from fewer samples than the batch, so the ranks repeat them: "
        f"{REMEDIES[FlagKind.SAMPLES_UNDER_BATCH]}"
    ]


LOSS_NOT_FINITE = FlagKind.LOSS.value  # the flag's kind (what the advice refuses on)


def loss_flags(loss: float | None) -> list[str]:
    """A run whose loss at its last timed step is no finite number (NaN, inf): a broken or
    diverged model, which trains nothing; its step times stand, its result does not."""
    if loss is None or math.isfinite(loss):
        return []
    return [
        # no "; " inside: a row's flags are "; "-separated
        f"{LOSS_NOT_FINITE}: {loss} at the last timed step, so the model trains nothing "
        f"(broken or diverged): {REMEDIES[FlagKind.LOSS]} (its step times stand)"
    ]


def busy_remedy(other: float, cpu: CpuUse | None) -> str:
    """What to do about a host whose other processes used ``other`` of its CPU time: where
    the run's ranks (``cpu``) had more threads than the cores left to them, the
    ``--threads`` that fit those cores (at least 1), and a quieter machine; else the
    quieter machine. Its text follows the flag's detail (no "; ": flags are separated so)."""
    quieter = QUIETER
    if cpu is None:
        return f": {quieter}"
    taken = other * cpu.cores
    left = cpu.cores - taken
    fit = max(1, int(left // cpu.ranks))
    if fit >= cpu.threads:
        return f": {quieter}"
    ranks = f"{cpu.ranks} rank{'s' if cpu.ranks > 1 else ''}"
    return (
        f" ({taken:.1f} of {cpu.cores} cores), leaving {left:.1f} to {ranks} of "
        f"{cpu.threads} threads: bench with --threads {fit}, or {quieter}"
    )


def host_flags(
    host: Record | None, cpu: CpuUse | None = None, during: str = "the timed steps"
) -> list[str]:
    """The flags a run's host shares raise: other processes' share above
    ``BUSY_OTHER_SHARE`` (with :func:`busy_remedy`, from ``cpu``: how the run's ranks
    used the host's cores), the hypervisor's above ``STEAL_SHARE`` (none from a share that
    was not measured: see :func:`host_measured`); ``during``: what the shares were read
    over (a collectives sweep's calls, a bench run's timed steps)."""
    other, steal = (host or {}).get("other_load_share"), (host or {}).get("steal_share")
    flags = []
    if _finite(other) and other > BUSY_OTHER_SHARE:
        flags.append(
            f"{FlagKind.BUSY}: other processes used {other:.0%} of its CPU time during "
            f"{during}{busy_remedy(other, cpu)}"
        )
    if _finite(steal) and steal > STEAL_SHARE:
        flags.append(f"{FlagKind.STEAL}: the hypervisor took {steal:.0%} of the CPU time")
    return flags


# Share of the time a rank's step thread (the one that runs its training loop and issues
# every op of its steps) was ready to run that it waited on a run queue for a core
# (``queued / (queued + its CPU time)``, ``bench.telemetry.run_queue``): cores held by
# other work, or by more threads than the host has. The step times hold those waits. The
# kernel books each to the nanosecond, so the share is a measurement over a timed phase of
# any length, where a tick share needs MIN_BUSY_WINDOW_S. A thread alone on its core waits
# only the microseconds of a wake-up; one sharing it with a busy process waits about half
# the time. Above this share, as for BUSY_OTHER_SHARE, a tenth of the step is another's.
QUEUED_SHARE = 0.10


def queued_share(host: Record | None) -> float | None:
    """The share of its ready time the step thread of the run's most-waiting rank spent
    on a run queue, from its host record's ``queued_ms`` and ``cpu_ms``; None where either
    is not recorded (rows written before it, a kernel without schedstat) or neither is
    above 0."""
    queued = number_or_none((host or {}).get("queued_ms"))
    cpu = number_or_none((host or {}).get("cpu_ms"))
    if queued is None or cpu is None or queued < 0 or cpu < 0 or queued + cpu <= 0:
        return None
    return queued / (queued + cpu)


def queued_flags(host: Record | None, cpu: CpuUse | None = None) -> list[str]:
    """The flag of a run whose step thread waited on a run queue more than
    ``QUEUED_SHARE`` of the time it was ready to run (:func:`queued_share`), with its
    numbers and its remedy: where its rank ran more threads (``cpu``) than the cores it got
    (its threads' CPU time, ``rank_cpu_ms``, over the phase's ``wall_ms``, rounded, at least
    1), ``--threads`` of those; always a quieter machine."""
    share = queued_share(host)
    if share is None or share <= QUEUED_SHARE:
        return []
    host = host or {}
    queued, wall = number_or_none(host.get("queued_ms")), number_or_none(host.get("wall_ms"))
    used = number_or_none(host.get("rank_cpu_ms"))
    during = f" of the {number(wall)} ms timed phase" if wall else ""
    remedy = "run on a quieter machine, nothing else running"
    if wall and used is not None:
        got = max(1, int(used / wall + 0.5))
        if cpu is not None and got < cpu.threads:
            remedy = (
                f"its {cpu.threads} threads got {used / wall:.1f} cores: bench with "
                f"--threads {got}, or {remedy}"
            )
    return [
        f"{FlagKind.QUEUED}: its step thread waited for a core {number(queued)} ms{during}, "
        f"{share:.0%} of the time it was ready to run (> {QUEUED_SHARE:.0%}): {remedy}"
    ]


def timed_window_s(timing: Record, steps: object) -> float:
    """Seconds the host's shares were read over: the timed phase, ``steps`` x (the
    synchronised + no-sync step (+ the plain step at N = 1)), each kind timed ``steps``
    times between the host samples; NaN when a step time or ``steps`` is missing."""
    kinds = [timing.get("step_ms_mean"), timing.get("nosync_step_ms_mean")]
    plain = timing.get("plain_step_ms_mean")
    if _finite(plain):
        kinds.append(plain)
    if not all(_finite(k) for k in kinds) or not _finite(steps) or isinstance(steps, bool):
        return math.nan
    return float(steps) * sum(float(k) for k in kinds) / 1e3


def host_measured(window_s: float) -> bool:
    """Whether host shares read over ``window_s`` seconds are a measurement: a window
    known and at least ``MIN_BUSY_WINDOW_S`` long (the one rule, for the flag and for the
    evidence grade)."""
    return _finite(window_s) and window_s >= MIN_BUSY_WINDOW_S


# A host whose shares were not measured (a window too short): never read as 0.
UNMEASURED_HOST: dict[str, float | None] = {"other_load_share": None, "steal_share": None}


def measured_host(
    host: Record | None, timing: Record, steps: object
) -> tuple[dict[str, object] | None, list[str]]:
    """``host`` as a measurement, and the flags it no longer raises: unchanged when read
    over a long enough window (:func:`host_measured`), else :data:`UNMEASURED_HOST` and the
    flags its tick-noise shares raised (:func:`host_flags`), for a reader to take back
    from rows written before this rule."""
    if host is None:
        return None, []
    if host_measured(timed_window_s(timing, steps)):
        return dict(host), []
    # the run queue's waits (queued_flags), read to the nanosecond, stand over any window
    return {**host, **UNMEASURED_HOST}, host_flags(host)


def _duplicated(noise: Record) -> bool:
    """A record's gradient norms say its ranks saw the same samples: marked so by the
    worker, or (results written before it checked) every step's rank-mean local norm
    equal to the all-reduced one at N > 1."""
    if noise.get("duplicated"):
        return True
    small, big = noise.get("batch_small") or 0, noise.get("batch_big") or 0
    local, glob = list(noise.get("local_sq") or []), list(noise.get("global_sq") or [])
    return big > small and len(local) == len(glob) and same_samples([local], glob)


# MFU is the run's FLOP/s over the device's peak at its precision: above 1 the run did more
# work a second than the device can, so its step times, its FLOPs per sample or the peak
# (the device named) are wrong.
MAX_MFU = 1.0


def mfu_above_peak(achieved_tflops: object, peak_tflops: object) -> float | None:
    """The MFU of a rate ``achieved_tflops`` per device on a device whose peak at the run's
    precision is ``peak_tflops``, where it is above ``MAX_MFU`` (a rate that cannot be
    true); else None, and None where either is unknown (a CPU, a device the catalogue
    lacks): the one rule, for the bench table's flag and the advice's warning."""
    if not (_finite(achieved_tflops) and _finite(peak_tflops)) or peak_tflops <= 0:
        return None
    share = float(achieved_tflops) / float(peak_tflops)
    return share if share > MAX_MFU else None


def peak_flags(achieved_tflops: object, peak_tflops: object) -> list[str]:
    """The flag of a run whose recorded rate, ``achieved_tflops`` per device, is above its
    device's ``peak_tflops`` at its precision (an MFU above ``MAX_MFU``); none where
    either is unknown (a CPU, a device the catalogue lacks)."""
    share = mfu_above_peak(achieved_tflops, peak_tflops)
    if share is None:
        return []
    return [
        # no "; " inside: a row's flags are "; "-separated
        f"{FlagKind.ABOVE_PEAK}: {number(achieved_tflops)} TFLOP/s per device, MFU "
        f"{above(share, MAX_MFU)} (> {MAX_MFU:g}), more work a second than the device's peak "
        f"of {number(peak_tflops)} TFLOP/s allows: {REMEDIES[FlagKind.ABOVE_PEAK]}"
    ]


def superlinear_flag(efficiency: float, accelerators: int, strategy: object = "ddp") -> str | None:
    """The flag for an efficiency that cannot be true, else None. At N = 1 the efficiency
    is the wrapper's one-rank step (DDP's, or FSDP's where ``strategy`` is ``fsdp``)
    against the plain step: below 1 is the wrapper's own overhead, above
    ``1 + ONE_RANK_FASTER`` the wrapper measured faster than the bare module (noise)."""
    if _finite(efficiency) and accelerators == 1 and efficiency > 1 + ONE_RANK_FASTER:
        wrapper = "FSDP" if str(strategy) == "fsdp" else "DDP"
        return (
            f"{wrapper}'s one-rank step measured {efficiency:.2f}x as fast as the plain step of "
            f"the same model: noise larger than {wrapper}'s own cost; "
            f"{REMEDIES[FlagKind.ONE_RANK_FASTER]}"
        )
    if _finite(efficiency) and accelerators > 1 and efficiency > SUPERLINEAR_EFFICIENCY:
        return (
            f"{FlagKind.SUPERLINEAR}: efficiency {efficiency:.2f} on {accelerators} devices "
            f"(> {SUPERLINEAR_EFFICIENCY}), so the runs are not comparable"
        )
    return None


# Numbers a user types, each in its unit, below which none can be true: a unit mistaken (7
# typed for 7M parameters, 0.7 for 700 W typed in kW). Flagged where they are read and kept
# out of advice (``implausible``), not refused: the advice's numbers still say what they imply.
# A model trains at least 1,000 parameters: the break-even search's smallest model
# (``advice.derived.SMALLEST_SEARCHED``); the smallest classic trained network, LeNet-5
# (LeCun et al., 1998), has about 60,000, the CPU toy model the tests bench 19,210. A count in
# millions or billions typed without its suffix (7 for 7M or 7B) falls under it.
MIN_PARAMS = 1e3
# A sample costs at least the smallest model's forward and backward, 6 FLOPs per parameter
# (2 forward, 4 backward) x MIN_PARAMS; a count in G or T typed bare (4 for 4G) falls under it.
MIN_FLOPS_PER_SAMPLE = 6 * MIN_PARAMS
# A device training draws at least a tenth of the lowest board power in the device catalogue
# (data/devices.csv: T4 70 W, L4 72 W): 7 W. Any catalogued device's power typed in kW (at most
# 1.0, the B200's 1,000 W) falls under it.
LOWEST_BOARD_POWER_W = 70.0
MIN_POWER_W = LOWEST_BOARD_POWER_W / 10
# Each typed number's floor, by its field (the advice request's and the plan request's).
TYPED_FLOORS: dict[str, float] = {
    "params": MIN_PARAMS,
    "flops_per_sample": MIN_FLOPS_PER_SAMPLE,
    "power_w": MIN_POWER_W,
}


def under_floor(
    values: Mapping[str, object], floors: Mapping[str, float] | None = None
) -> list[tuple[str, float, float]]:
    """(field, value, floor) of each of ``values`` (field -> the number typed; None: not
    given) under its floor, ``floors``' else ``TYPED_FLOORS``' (a request's own: the samples
    to train are at least one step's batch): the one rule, for ``advise`` and ``plan``."""
    found = []
    for name, value in values.items():
        floor = {**TYPED_FLOORS, **(floors or {})}.get(name, -math.inf)  # none: unchecked
        if isinstance(value, int | float) and math.isfinite(value) and value < floor:
            found.append((name, float(value), floor))
    return found


# An energy to train over its accelerator-time, N x T, is the average power per accelerator,
# host included (its share of the node's CPUs, memory, network, switches, fans, cooling and
# supply losses). Above 3 x the highest board power of the device catalogue
# (data/devices.csv: 1,000 W, B200 and GH200) it cannot be true: a rack of 72 accelerators
# with its CPUs, NVLink switches and liquid cooling spends less than a board's power again
# on them; v5.0's Lenovo 8 x B200 nodes drew 1,180 W per accelerator. Nor can it fall under
# 50 W, under the lowest board power known (70 W, T4) while training: v4.0-v5.0's power
# results span 690-1,180 W. Outside, the logs' unit (kW for W), the node count or the
# accelerator count is wrong (each off by a factor of 8 or more): the energy is flagged and
# left out of findings.
MAX_ACCELERATOR_POWER_W = 3_000.0
MIN_ACCELERATOR_POWER_W = 50.0


def accelerator_power_flag(energy_kj: object, accelerators: object, minutes: object) -> str:
    """Why an energy to train of ``energy_kj`` on ``accelerators`` for ``minutes`` cannot
    be true: the power per accelerator (host included) it implies, ``1000 E / (N x 60 T)``
    W, is outside what any accelerator draws; "" where it can be, or is not known (a value
    missing, NaN or not positive)."""
    energy, n, time_min = (number_or_none(v) for v in (energy_kj, accelerators, minutes))
    if energy is None or n is None or time_min is None or not (n > 0 and time_min > 0):
        return ""
    value = 1000.0 * energy / (n * time_min * 60.0)
    if not math.isfinite(value):
        return ""
    if value > MAX_ACCELERATOR_POWER_W:
        bound = f"above {number(MAX_ACCELERATOR_POWER_W)} W"
    elif value < MIN_ACCELERATOR_POWER_W:
        bound = f"under {number(MIN_ACCELERATOR_POWER_W)} W"
    else:
        return ""
    return (
        f"implies {number(value)} W per accelerator, host included ({bound}, beyond any "
        "accelerator's draw while training): check the power logs' unit (W) and the "
        "system's node and accelerator counts"
    )


def energy_meter_flag(dropouts: object, uncovered_s: object) -> str:
    """Why a bench run's energy and power are no measurement: its meter dropped out
    (``bench.telemetry.sampled_power``: ``dropouts`` readings at ~0 W, failed, or a
    stretch without one; ``uncovered_s`` seconds of the timed phase no reading covered),
    so the mean of the other readings stands in for those moments. Any dropout flags: a
    ~0 W reading averaged in among 20 a second for a second understates the power by 5%.
    "" where none, or where the run recorded no count (rows written before it)."""
    count = number_or_none(dropouts)
    if count is None or not math.isfinite(count) or count < 1:
        return ""
    uncovered = number_or_none(uncovered_s)
    seconds = "" if uncovered is None else f", {number(uncovered)} s of the timed phase uncovered"
    readings = "reading" if count == 1 else "readings"
    return (
        f"power meter dropouts: {number(int(count))} {readings} at ~0 W, failed or missing"
        f"{seconds}; its energy and power are left out of the advice's energy and cost "
        "(bench again, or on a GPU with an energy counter, Volta or newer)"
    )
