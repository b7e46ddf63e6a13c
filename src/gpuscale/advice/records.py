"""The :class:`Decision` in its parts and the parts of an advice beside it, as numbers
(units in the names), rendered by ``advice.explain``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from gpuscale.advice.types import Finding, Reading


@dataclass(frozen=True, kw_only=True, slots=True)
class Chosen:
    """The count chosen and its row of the predictions: batches in samples, the speedup
    over one device (x), its 80% interval, its two factors and their product, the
    efficiency (fractions)."""

    accelerators: int  # recommended (1 when no larger count qualifies)
    batch_per_device: float
    accum: int
    global_batch: float
    time_to_train_min: float
    speedup: float
    speedup_low: float  # the 80% interval
    speedup_high: float
    efficiency: float
    throughput_efficiency: float
    convergence_factor: float
    reaches_target: bool  # efficiency >= target at ``accelerators`` (always for 1)


@dataclass(frozen=True, slots=True)
class HeldBack:
    """A faster count that reached the target but whose speedup's 80% interval includes
    1x (or any count above one, where an input cannot be true)."""

    accelerators: int
    speedup_low: float


@dataclass(frozen=True, kw_only=True, slots=True)
class Focus:
    """Where the next step would go (the smallest count above the chosen, else the largest
    predicted) and its row; ``rests_on``: ``predicted``, ``measured`` or
    ``measured_below``."""

    accelerators: int
    step_ms: float
    compute_ms: float
    speedup: float
    speedup_low: float
    speedup_high: float
    throughput_efficiency: float
    convergence_factor: float
    rests_on: str = "predicted"
    # the samples to train there over one device's (``1 / convergence_factor``; None unless
    # convergence caps the speedup); the step less what the model's terms leave of a
    # measured one (None: the step is predicted)
    samples_ratio: float | None = None
    explained_ms: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Limit:
    """What limits the speedup at the focus count and what would change it."""

    dominant_term: str
    # the step's overheads (ms) at the focus: fixed, wait, ddp, bandwidth, latency,
    # unexplained (a measured step less the model's terms; 0 where the step is predicted)
    overheads_ms: dict[str, float]
    cap: str  # "overheads", "convergence", "none"; or why none above: "devices", "batch", "flagged"
    change: str  # what would change it: a key of focus.REMEDIES
    # the efficiency at the focus were the dominant overhead gone (None: N = 1 or compute)
    without_dominant_efficiency: float | None = None
    # the other overheads, largest first, that must go with it to reach the target there
    also_shrink: tuple[str, ...] = ()
    # whether larger buckets (DDP's: the gradients fill more than one) or larger units (a
    # sharded strategy's: the model is wrapped in more than one) would issue fewer
    # collectives, each paying its latency
    fewer_messages: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class Counts:
    """The device counts searched (``Machine.device_counts``: powers of two up to the most
    allowed, past one node whole nodes) against the predictions' rows: ``every``, whether
    they are every count from 1; ``pow2``, whether the most is a power of two;
    ``per_node``, the devices a node holds (None: one node); ``off_nodes``, the counts the
    powers-of-two rule gives that are not whole nodes; ``missing``, the counts searched
    without a row; where the search stopped below the most allowed, above the focus count:
    the counts not searched, those searched without a row, those flagged, and the fewest
    whole nodes' devices above the most where a count the rule gives there is not whole
    nodes (None: none)."""

    searched: tuple[int, ...] = ()
    most: int = 1
    every: bool = True
    pow2: bool = True
    per_node: int | None = None
    off_nodes: tuple[int, ...] = ()
    missing: tuple[int, ...] = ()
    unsearched_above: tuple[int, ...] = ()
    missing_above: tuple[int, ...] = ()
    flagged_above: tuple[int, ...] = ()
    whole_nodes: int | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """The recommendation and the numbers behind each part of it."""

    chosen: Chosen
    target_efficiency: float
    held_back: HeldBack | None  # a count that reached the target, its interval including 1x
    fastest: int | None  # fastest trusted count that holds the model (None: none does)
    largest: int  # largest count predicted
    focus: Focus  # where the limit and the cap are read
    limit: Limit
    warnings: tuple[str | Finding, ...] = field(default=())  # rendered by ``explain``
    refused: bool = False  # an input cannot be true: no count above 1 (nothing is sure)
    settle: str | None = None  # the measurement that would settle a held-back count
    # the count at each end of every assumed term's range (numbers: FLOPs per sample, the
    # fixed cost; an assumed link), and the first term whose range moves the count: then
    # the count is withheld (``count`` None) and that term is what to give or measure
    readings: tuple[Reading, ...] = ()
    withheld_by: str | None = None
    # whether a count predicted holds the model (``advice.memory``): where none does,
    # ``chosen`` is read as without memory and no count is advised
    holds: bool = True
    counts: Counts = field(default_factory=Counts)  # the counts searched and their rows

    @property
    def count(self) -> int | None:
        """The count recommended; None where no count holds the model, an assumed term's
        range moves it, or an input cannot be true and one device cannot hold the model."""
        if not self.holds or self.withheld_by or (self.refused and self.chosen.accelerators > 1):
            return None
        return self.chosen.accelerators

    def to_dict(self) -> dict:
        """Its fields nested; ``accelerators`` is :attr:`count`."""
        return {"accelerators": self.count, **asdict(self)}

    def short_alone(self) -> bool:
        """Whether the step's overheads cap the focus count and it misses the target even
        with its largest overhead gone (no one remedy is enough)."""
        gone = self.limit.without_dominant_efficiency
        return self.limit.cap == "overheads" and gone is not None and gone < self.target_efficiency


@dataclass(frozen=True, kw_only=True, slots=True)
class Equilibrium:
    """The numbers that make the equilibrium picks, over the trusted predictions: the count
    of the best efficiency and that efficiency; the speedup (x), efficiency and their product
    at the speed x efficiency pick; the efficiency at the threshold pick, the next count
    above it and its efficiency (None: none); the rows read."""

    best_n: int
    best_efficiency: float
    sxe_speedup: float
    sxe_efficiency: float
    sxe_product: float
    kept_efficiency: float | None = None
    next_n: int | None = None
    next_efficiency: float | None = None
    rows: int = 0


@dataclass(frozen=True, slots=True)
class Picks:
    """The counts other rules pick: the largest reaching the target efficiency, the fewest
    device-hours (None: no price), the equilibrium picks by rule (``search.decision``) and
    the numbers that make them."""

    efficient: int | None
    cheapest: int | None
    equilibrium: dict[str, int | None]
    numbers: Equilibrium


@dataclass(frozen=True, kw_only=True, slots=True)
class OneDeviceRow:
    """The N = 1 row beside the bench's N = 1 run (``calibration.OneDevice``), ms: the row's
    step; DDP's own work the first count above 1 adds (0: none); the samples per device and
    optimizer step of the row and of the bench's run; the bench's step less the strategy's
    own work (the no-sync step) and it less the row's (``gap_ms``); the share FSDP's own work
    overstates the bench's step (``step / (step - fsdp_own)``; None unless
    ``0 < fsdp_own < step``); the step predicted at the bench's batch and accumulation (None:
    no bench run at N = 1)."""

    step_ms: float = 0.0
    added_ddp_ms: float = 0.0
    row_samples: float = 0.0
    bench_samples: float | None = None
    nosync_ms: float | None = None
    gap_ms: float | None = None
    overstated: float | None = None
    at_bench_ms: float | None = None


@dataclass(frozen=True, slots=True)
class BreakEven:
    """From where 2 devices train faster than 1 on this link (None: none sought or found;
    the sizes NaN where the speedup falls with size), and this model beside it."""

    compute_ms_per_grad_mb: float | None = None
    params: float | None = None
    target_efficiency_params: float | None = None
    # this model's whole step (fixed cost included): its TFLOP/s and compute per gradient
    # MB; the break-even's compute per gradient byte at that rate (FLOPs)
    step_tflops: float | None = None
    own_ms_per_grad_mb: float | None = None
    flops_per_grad_byte: float | None = None
    flops_per_param: float | None = None  # FLOPs per parameter per sample
    # this model's optimizer step and DDP's own work (ms) and the family's lines at its size
    own_optimizer_ms: float | None = None
    own_ddp_ms: float | None = None
    family_optimizer_ms: float | None = None
    family_ddp_ms: float | None = None
    # this model's table on 2 devices: its throughput speedup, its speedup to a trained model
    pair_throughput_speedup: float | None = None
    pair_speedup: float | None = None


@dataclass(frozen=True, kw_only=True, slots=True)
class FixedTerm:
    """The fixed per-step costs (ms): the optimizer step on one device (0 where nothing
    measured it) and on each device at the focus count (whole under DDP, the shard's ``1/n``
    under FSDP); the ``fixed`` term there (``fixed_excess_ms``, ``excess_ms``) split into the
    optimizer step's part (``opt_n - opt s``, ``s`` the samples per device and step at ``n``
    over one device's) and the forward and backward's, the rest."""

    optimizer_ms: float = 0.0
    optimizer_at_focus_ms: float = 0.0
    excess_ms: float = 0.0
    optimizer_excess_ms: float = 0.0
    forward_backward_excess_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class Qualifiers:
    """What qualifies the headline: the options the times rest on that were never given
    (``defaults``), the steps of a noise scale measured over too few, another model than
    the largest advised on (``model_note``), which benched model was advised on."""

    defaults: tuple[str, ...] = ()
    noise_steps: int | None = None
    model_note: str = ""
    model_chosen: str = ""


@dataclass(frozen=True, kw_only=True, slots=True)
class RowSpan:
    """A row's interval around its point as changes (fractions: ``low / point - 1``): the
    step's ends and the speedup's."""

    accelerators: int
    step_low: float
    step_high: float
    speedup_low: float
    speedup_high: float


@dataclass(frozen=True, kw_only=True, slots=True)
class RowIntervals:
    """The intervals the rows above one device carry and why the predicted rows' differ
    from the model's error alone (``wider``: ``ranges``, the step at the ends of the ranges
    of the terms not measured; ``floor``, its lower end no lower than its compute;
    ``linear``, the speedup's upper end no higher than compute alone or linear allow;
    ``growing``, the error's width growing past the counts measured; none where ``rule``,
    the link class's calibrated rule of the speedup's interval, is the advice's)."""

    rule: Finding | None = None
    spans: tuple[RowSpan, ...] = ()
    wider: tuple[str, ...] = ()

    def span(self, n: int) -> RowSpan:
        """The span of the row at ``n`` devices."""
        return next(s for s in self.spans if s.accelerators == n)


@dataclass(frozen=True, slots=True)
class InputRate:
    """The input pipeline's load: the samples/s the largest count predicted consumes, that
    count, and each device's (each process's) share."""

    samples_per_s: float
    devices: int
    per_device: float
