"""The advice's memory check: what each device holds under each strategy at each count
searched, ``memory``'s model state plus activations (a transformer shape's, Korthikanti et al.
2022; else the bench's N = 1 peak less its state; else none, a lower bound). A count that does
not fit is never advised."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gpuscale.hardware.capacity import BYTES_PER_GB, AcceleratorMemory
from gpuscale.hardware.memory import (
    GATHERED,
    STRATEGY_SHARDING,
    MemoryAt,
    StateBytes,
    fewest_devices,
    gathered_bytes,
    memory_at,
    model_state,
    state_bytes,
    state_per_device,
)
from gpuscale.hardware.transformer import Activations, ShapeNumbers

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
