"""The memory a training run holds on each device besides its activations: the model state.

A model of ``P`` trained and ``F`` frozen parameters holds, per parameter, the bytes its
optimizer and precision need (``data/state_bytes.csv``, each row with its source in
``data/memory_sources.csv``): weights ``w``, gradients ``g`` and optimizer states ``o``
(mixed-precision Adam: ``2 + 2 + 12 = 16``, the ZeRO paper's figure); a frozen parameter
(a LoRA run's base model) its weights alone. How a strategy spreads that state over ``N``
devices (ZeRO's stages, PyTorch FSDP's sharding strategies):

* ``ddp`` (DistributedDataParallel, FSDP ``NO_SHARD``): every device holds all of it;
* ``shard_grad_op`` (ZeRO-2): weights whole, gradients and optimizer states ``/ N``;
* ``full_shard`` (ZeRO-3; tensor and pipeline parallel with a distributed optimizer
  spread the state the same way): all of it ``/ N``;
* ``hybrid_shard``: full sharding within a group of ``G`` devices (a node), replicas
  across groups: all of it ``/ min(N, G)``.

Each part is a :class:`MemoryPart` in GB (10^9 bytes) with its source; :func:`memory_at`
is what a device holds under one of the advice's strategies, activations and the units FSDP
gathers whole (:func:`gathered_bytes`) beside. What a device holds fits where it is at most
the usable share of its memory (``AcceleratorMemory.usable_gb``, ``data/usable_memory.csv``),
never the whole. Pure: nothing here reads a run or prints.

The advice's memory check (:func:`check`): what each device holds under each strategy at each
count searched, the model state plus activations (a transformer shape's, Korthikanti et al.
2022; else the bench's N = 1 peak less its state; else none, a lower bound). A count that does
not fit is never advised.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from gpuscale.hardware.capacity import BYTES_PER_GB, AcceleratorMemory
from gpuscale.hardware.cited import Source, data_rows
from gpuscale.hardware.transformer import Activations, ShapeNumbers


class Sharding(str, Enum):
    """How a strategy spreads the model state over the devices (module docstring)."""

    DDP = "ddp"
    SHARD_GRAD_OP = "shard_grad_op"
    FULL_SHARD = "full_shard"
    HYBRID_SHARD = "hybrid_shard"


@dataclass(frozen=True, kw_only=True, slots=True)
class StateBytes:
    """Bytes per parameter an optimizer and precision hold: weights, gradients,
    optimizer states (``source``: an id of ``memory_sources.csv``)."""

    optimizer: str
    precision: str
    weights_bytes: float
    gradients_bytes: float
    optimizer_bytes: float
    source: str
    note: str = ""

    @property
    def bytes_per_param(self) -> float:  # weights, gradients and optimizer states
        return self.weights_bytes + self.gradients_bytes + self.optimizer_bytes


@dataclass(frozen=True, kw_only=True, slots=True)
class ModelState:
    """What a model holds besides activations: ``trainable_parameters`` with
    ``trainable`` bytes each, ``frozen_parameters`` with ``frozen`` bytes each, and the
    sharding its MLPerf submissions' strategy gives (the most the state is spread)."""

    name: str
    trainable_parameters: float
    frozen_parameters: float
    trainable: StateBytes
    frozen: StateBytes
    sharding: Sharding
    sources: tuple[str, ...]
    exact: bool  # a count of the parameters, not a published round figure
    note: str = ""


@dataclass(frozen=True, slots=True)
class MemoryPart:
    """One part of a device's memory: ``name`` (weights, gradients, optimizer states,
    frozen weights), ``gb`` on each device, the devices it is ``sharded_over`` (1: whole
    on each) and its ``source``."""

    name: str
    gb: float
    sharded_over: int
    source: str


@dataclass(frozen=True, kw_only=True, slots=True)
class DeviceMemory:
    """The memory each of ``devices`` devices holds under ``sharding``: its parts."""

    parts: tuple[MemoryPart, ...]
    sharding: Sharding
    devices: int

    @property
    def total_gb(self) -> float:
        return sum(p.gb for p in self.parts)


# The advice's strategies (``--strategy``) by the sharding each is
STRATEGY_SHARDING = {
    "ddp": Sharding.DDP,
    "zero2": Sharding.SHARD_GRAD_OP,
    "fsdp": Sharding.FULL_SHARD,
    "hybrid": Sharding.HYBRID_SHARD,
}
# the strategies that gather each unit's weights whole before computing it (the weights
# sharded); ZeRO-2 keeps them whole throughout
GATHERED = ("fsdp", "hybrid")


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryAt:
    """What each of ``devices`` devices holds under ``strategy`` (GB, 10^9 bytes;
    activations None: not counted) against its memory."""

    strategy: str
    devices: int
    weights_gb: float
    gradients_gb: float
    optimizer_states_gb: float
    activations_gb: float | None
    total_gb: float
    capacity_gb: float
    usable_gb: float  # the share of ``capacity_gb`` a run may fill: ``fits`` compares with it
    fits: bool
    # FSDP's units held whole beyond the shards (a shape's layers; None: not counted)
    gathered_gb: float | None = None

    @property
    def state_gb(self) -> float:  # weights, gradients and optimizer states: at any batch
        return self.weights_gb + self.gradients_gb + self.optimizer_states_gb


@functools.cache
def sources() -> dict[str, Source]:
    """Every source of the memory figures, by id."""
    return {row["id"]: Source(**row) for row in data_rows("memory_sources.csv")}


@functools.cache
def state_bytes() -> dict[tuple[str, str], StateBytes]:
    """Bytes per parameter by (optimizer, precision)."""
    out = {}
    for row in data_rows("state_bytes.csv"):
        out[(row["optimizer"], row["precision"])] = StateBytes(
            optimizer=row["optimizer"],
            precision=row["precision"],
            weights_bytes=float(row["weights_bytes"]),
            gradients_bytes=float(row["gradients_bytes"]),
            optimizer_bytes=float(row["optimizer_bytes"]),
            source=row["source"],
            note=row["note"],
        )
    return out


@functools.cache
def workload_states() -> dict[str, ModelState]:
    """Each MLPerf workload's model state (``data/workload_parameters.csv``), by name."""
    table = state_bytes()
    out = {}
    for row in data_rows("workload_parameters.csv"):
        out[row["workload"]] = ModelState(
            name=row["workload"],
            trainable_parameters=float(row["trainable_parameters"]),
            frozen_parameters=float(row["frozen_parameters"]),
            trainable=table[(row["optimizer"], row["precision"])],
            frozen=table[("frozen", row["frozen_precision"])],
            sharding=Sharding(row["sharding"]),
            sources=tuple(row["source"].split(";")),
            exact=row["exact"] == "yes",
            note=row["note"],
        )
    return out


def workload_state(workload: str) -> ModelState | None:
    """The model state of an MLPerf workload (its cross-round name); None where its
    parameters are not in the table."""
    return workload_states().get(workload)


def spread_over(sharding: Sharding, devices: int, group: int) -> dict[str, int]:
    """Over how many devices each part is split (``group``: a node's, for ``hybrid_shard``)."""
    every = {"weights": 1, "gradients": 1, "optimizer states": 1}
    if sharding is Sharding.SHARD_GRAD_OP:
        return every | {"gradients": devices, "optimizer states": devices}
    if sharding is Sharding.FULL_SHARD:
        return dict.fromkeys(every, devices)
    if sharding is Sharding.HYBRID_SHARD:
        return dict.fromkeys(every, min(devices, group))
    return every


def state_per_device(
    state: ModelState, devices: int, sharding: Sharding | None = None, group: int = 8
) -> DeviceMemory:
    """The model state each of ``devices`` devices holds under ``sharding`` (default:
    the workload's own), part by part (module docstring)."""
    if devices < 1:
        raise ValueError(f"devices must be at least 1, not {devices}")
    how = sharding or state.sharding
    over = spread_over(how, devices, group)
    trained, frozen = state.trainable, state.frozen
    wanted = (
        ("weights", state.trainable_parameters * trained.weights_bytes, trained.source),
        ("gradients", state.trainable_parameters * trained.gradients_bytes, trained.source),
        ("optimizer states", state.trainable_parameters * trained.optimizer_bytes, trained.source),
    )
    parts = [
        MemoryPart(name, total / over[name] / BYTES_PER_GB, over[name], source)
        for name, total, source in wanted
        if total > 0
    ]
    if state.frozen_parameters > 0:
        total = state.frozen_parameters * frozen.weights_bytes
        parts.append(
            MemoryPart(
                "frozen weights",
                total / over["weights"] / BYTES_PER_GB,
                over["weights"],
                frozen.source,
            )
        )
    return DeviceMemory(parts=tuple(parts), sharding=how, devices=devices)


def model_state(params: float, optimizer: str, precision: str, name: str = "") -> ModelState:
    """The model state of a model given by its ``params`` (every one trained) under
    ``optimizer`` and ``precision`` (a key of :func:`state_bytes`; ``KeyError`` for
    another), held whole (DDP) unless a strategy says otherwise."""
    trained = state_bytes()[(optimizer, precision)]
    return ModelState(
        name=name or f"{params:g} parameters",
        trainable_parameters=float(params),
        frozen_parameters=0.0,
        trainable=trained,
        frozen=state_bytes()[("frozen", "bf16")],
        sharding=Sharding.DDP,
        sources=(trained.source,),
        exact=False,
    )


def fewest_devices(
    state: ModelState,
    memory: AcceleratorMemory,
    sharding: Sharding | None = None,
    group: int = 8,
    extra_gb: float = 0.0,
) -> int | None:
    """The fewest devices of ``memory`` that hold the model state under ``sharding``
    (default: the workload's) and ``extra_gb`` held whole on each (activations measured)
    within ``memory.usable_gb``; None where no count does (a replica larger than that: the
    state whole on each device however many there are)."""
    usable = memory.usable_gb
    one = state_per_device(state, 1, sharding, group)
    if one.total_gb + extra_gb <= usable:
        return 1
    how = one.sharding
    if how is Sharding.DDP:
        return None
    held = ("weights", "frozen weights")  # whole on each device under ZeRO-2
    whole = sum(p.gb for p in one.parts if how is Sharding.SHARD_GRAD_OP and p.name in held)
    whole += extra_gb
    split = one.total_gb + extra_gb - whole
    if whole >= usable:
        return None
    devices = max(2, math.ceil(split / (usable - whole)))
    if how is Sharding.HYBRID_SHARD and devices > group:
        return None
    return devices


def memory_at(
    state: ModelState,
    strategy: str,
    devices: int,
    memory: AcceleratorMemory,
    per_node: int,
    activations_gb: float | None = None,
    gathered_gb: float | None = None,
) -> MemoryAt:
    """What each of ``devices`` holds under ``strategy``: the model state, plus
    ``activations_gb`` and ``gathered_gb`` (the units a fully sharded step holds whole) where
    counted."""
    held = state_per_device(state, devices, STRATEGY_SHARDING[strategy], per_node)
    parts = {p.name: p.gb for p in held.parts}
    total = held.total_gb + (activations_gb or 0.0) + (gathered_gb or 0.0)
    return MemoryAt(
        strategy=strategy,
        devices=devices,
        weights_gb=parts.get("weights", 0.0),
        gradients_gb=parts.get("gradients", 0.0),
        optimizer_states_gb=parts.get("optimizer states", 0.0),
        activations_gb=activations_gb,
        total_gb=total,
        capacity_gb=memory.gb,
        usable_gb=memory.usable_gb,
        fits=total <= memory.usable_gb,
        gathered_gb=gathered_gb,
    )


# Units whose weights a device holds whole at once under FSDP: the one computing and the
# next, prefetched; the computing one's gradients whole too (``transformer_sources.csv``
# ``fsdp-gathered``).
GATHERED_UNITS = 2


def gathered_bytes(unit_params: float, state: StateBytes) -> float:
    """What a device holds whole beyond its shards under FSDP: ``GATHERED_UNITS`` units'
    weights and one unit's gradients, each unit of ``unit_params`` held at ``state``'s bytes."""
    return unit_params * (GATHERED_UNITS * state.weights_bytes + state.gradients_bytes)


# Of two strategies that fit the same fewest devices, the first communicates less (ZeRO-2
# gathers the weights once a step, full sharding twice; hybrid as full sharding in a node).
STRATEGIES = tuple(STRATEGY_SHARDING)
DEFAULT_OPTIMIZER = "adam"
DEFAULT_PRECISION = "mixed"  # bf16/fp16 weights and gradients, fp32 master copy and states
# What a bench run held: ``gpuscale bench`` trains with AdamW on fp32 parameters (autocast).
BENCH_STATE = ("adam", "fp32")


@dataclass(frozen=True, kw_only=True, slots=True)
class CheckedDevice:
    """The device's ``memory``, why it is ``assumed`` ("": named, recorded or implied)."""

    memory: AcceleratorMemory
    per_node: int
    assumed: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class MemoryCheck:
    """``params`` held at ``state``'s bytes each: ``rows`` per strategy and count ``searched``,
    per strategy the fewest devices that fit (searched or not; None: none)."""

    strategy: str  # the strategy asked
    params: float
    state: StateBytes
    device: CheckedDevice
    activations_gb: float | None
    activations_source: str = ""  # said by ``explain.explanation.worded``
    rows: tuple[MemoryAt, ...]
    fewest: tuple[tuple[str, int | None], ...]  # (strategy, fewest devices that fit)
    searched: tuple[int, ...]
    # a transformer shape's activations at one device's micro-batch (None: measured or none),
    # then those of each count searched whose micro-batch is smaller (a kept batch split)
    activations_counted: Activations | None = None
    activations_by_count: tuple[tuple[int, Activations], ...] = ()
    # what fully sharded strategies hold whole beyond their shards (GB; None: not counted)
    gathered_gb: float | None = None

    def fits_from(self, strategy: str) -> int | None:
        """The smallest count searched that holds the model under ``strategy``."""
        counts = [r.devices for r in self.rows if r.strategy == strategy and r.fits]
        return min(counts, default=None)

    def holding(self, strategy: str) -> int | None:  # searched or not (the searched first)
        return dict(self.fewest)[strategy]

    def split_batch(self, strategy: str, kept: int) -> int | None:
        """The smallest global batch >= ``kept`` that splits over :meth:`holding`'s devices."""
        fewest = self.holding(strategy)
        return None if fewest is None else -(-kept // fewest) * fewest

    def micro_batch(self, devices: int) -> int | None:
        """The micro-batch whose activations ``devices`` were checked at (None: not a
        shape's, the same at every batch)."""
        if self.activations_counted is None:
            return None
        return dict(self.activations_by_count).get(devices, self.activations_counted).micro_batch

    def whole_nodes(self, gpus: int) -> int | None:
        would = self.would_hold
        return None if would is None else -(-would[1] // gpus) * gpus

    def state_beyond_one(self) -> MemoryAt | None:
        """The one-device row where the model's state alone (weights, gradients and
        optimizer states; activations aside, so at any batch) is more than one device may
        fill, else None: no strategy or batch lets one device hold it."""
        one = next((r for r in self.rows if r.devices == 1), None)
        if one is None:
            return None
        return one if one.state_gb > one.usable_gb else None

    def holds(self, strategy: str, devices: int) -> bool:
        """Whether ``devices`` hold the model (a count not searched: at least the fewest)."""
        row = [r.fits for r in self.rows if r.strategy == strategy and r.devices == devices]
        fewest = self.holding(strategy)
        return row[0] if row else fewest is not None and devices >= fewest

    @property
    def limits(self) -> bool:  # the counts of the strategy asked (only then is memory said)
        return self.fits_from(self.strategy) != 1

    @property
    def fallback(self) -> tuple[str, int] | None:
        """The strategy and count searched holding the model on the fewest devices."""
        found = [(self.fits_from(s), i, s) for i, s in enumerate(STRATEGIES)]
        fewest = min((f for f in found if f[0] is not None), default=None)
        return None if fewest is None else (fewest[2], fewest[0])

    def least(self, strategy: str) -> tuple[MemoryAt, bool]:
        """The count searched where a device holds least (the fewest devices among equals),
        and whether every count holds the same (DDP)."""
        rows = [r for r in self.rows if r.strategy == strategy]
        least = min(rows, key=lambda r: (r.total_gb, r.devices))
        return least, all(r.total_gb == least.total_gb for r in rows)

    def at(self, strategy: str, devices: int) -> MemoryAt:
        return next(r for r in self.rows if r.strategy == strategy and r.devices == devices)

    @property
    def would_hold(self) -> tuple[str, int, int | None] | None:
        """Beyond the counts searched: the strategy holding the model on the fewest devices,
        those devices (past a node, its whole nodes') and nodes (None within one)."""
        would = [(n, STRATEGIES.index(s), s) for s, n in self.fewest if n is not None]
        if not would:
            return None
        devices, _, strategy = min(would)
        if devices <= self.device.per_node:
            return strategy, devices, None
        nodes = -(-devices // self.device.per_node)
        return strategy, nodes * self.device.per_node, nodes


def check(
    params: float,
    *,
    asked: tuple[str | None, str | None],
    strategy: str,
    memory: AcceleratorMemory,
    counts: tuple[int, ...],
    per_node: int,
    benched: bool = False,
    peak_gb: float | None = None,
    activations_gb: float | None = None,
    shape: ShapeNumbers | None = None,
    micro: Mapping[int, int] | None = None,
) -> tuple[MemoryCheck, float | None]:
    """The memory check of ``params`` at each of ``counts`` under every strategy and the
    (optimizer, precision) ``asked`` (default where ``benched``: ``BENCH_STATE``), and the
    state (GB) the bench's N = 1 run held. Activations: ``activations_gb``, else ``peak_gb``
    less that state, else ``shape``'s at each count's micro-batch (``micro``, 1 included)."""
    if benched:
        asked = (asked[0] or BENCH_STATE[0], asked[1] or BENCH_STATE[1])
    optimizer, precision = asked[0] or DEFAULT_OPTIMIZER, asked[1]
    if precision is None:  # the default, unless the optimizer is known in fp32 only
        known = [p for o, p in state_bytes() if o == optimizer]
        precision = DEFAULT_PRECISION if DEFAULT_PRECISION in known else known[0]
    micro = micro or {}
    activations = {a.micro_batch: a for a in shape.activations} if shape else {}
    counted = None if peak_gb is not None or not activations else activations[micro[1]]
    by_count = tuple(
        (n, activations[micro[n]])
        for n in counts
        if counted is not None and micro[n] != counted.micro_batch
    )
    state = model_state(params, optimizer, precision)
    held_gb = None
    if peak_gb is not None:  # the N = 1 run's peak less the model state it held
        held_gb = state_per_device(model_state(params, *BENCH_STATE), 1).total_gb
        activations_gb = max(0.0, peak_gb - held_gb)
    elif counted is not None:
        activations_gb = counted.total_gb
    gathered = None
    if shape is not None:
        gathered = gathered_bytes(float(shape.layer_params), state.trainable) / BYTES_PER_GB
    at_count = {n: a.total_gb for n, a in by_count}
    rows = tuple(
        memory_at(
            state,
            s,
            n,
            memory,
            per_node,
            at_count.get(n, activations_gb),
            gathered if s in GATHERED and n > 1 else None,
        )
        for s in STRATEGIES
        for n in counts
    )
    # per strategy the fewest devices that hold the model: among the counts, else at all
    # (past the counts searched the micro-batch is at most the largest count's)
    beyond = at_count.get(max(counts, default=1), activations_gb) or 0.0
    fewest = []
    for s in STRATEGIES:
        searched = [r.devices for r in rows if r.strategy == s and r.fits]
        extra = beyond + ((gathered or 0.0) if s in GATHERED else 0.0)
        most = fewest_devices(state, memory, STRATEGY_SHARDING[s], per_node, extra)
        fewest.append((s, min(searched, default=most)))
    found = MemoryCheck(
        strategy=strategy,
        params=state.trainable_parameters,
        state=state.trainable,
        device=CheckedDevice(memory=memory, per_node=per_node),
        activations_gb=activations_gb,
        rows=rows,
        fewest=tuple(fewest),
        searched=tuple(counts),
        activations_counted=counted,
        activations_by_count=by_count,
        gathered_gb=gathered,
    )
    return found, held_gb
