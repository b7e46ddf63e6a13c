"""One advice request (:class:`AdviceRequest`): ``request_fields``' fields, each number checked
against its range and the options against each other as it is made, a refusal one line; the
device, the links and the workload it names resolved then, once (``advice.named``)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuscale.advice.model.hardware import (
    step_warnings,
    typed_warnings,
)
from gpuscale.advice.named import NamedHardware, NamedWorkload, named_hardware, named_workload
from gpuscale.advice.request_fields import (
    GRAD_BYTES,
    MAX_DEVICES,
    OPTIMIZERS,
    RANGES,
    RULES,
    SCALINGS,
    SHAPE_NUMBERS,
    RequestFields,
)
from gpuscale.advice.types import Finding, read_data
from gpuscale.hardware.memory import STRATEGIES, state_bytes
from gpuscale.hardware.transformer import CHECKPOINTING, presets
from gpuscale.names import (
    UnknownNameError,
    resolve_ruleset,
    resolve_workloads,
    workload_read_as,
)
from gpuscale.quantities import agreeing, counted, joined
from gpuscale.tables.refusals import check_flags, check_ranges
from gpuscale.tables.requests import FieldError, NamedError, ref, settle_choice

if TYPE_CHECKING:
    pass


@dataclass(frozen=True, kw_only=True, slots=True)
class AdviceRequest(RequestFields):
    """What to advise on: each field's help (the ``advise`` option's) in its metadata.
    Checked when made: a number out of its range, or options that contradict each other,
    a :class:`FieldError` (a ``ValueError``) naming them. ``gpuscale.advise(request,
    **fields)`` advises on it, the keywords replacing its fields; ``to_json`` and
    ``from_json`` write and read it."""

    hardware: NamedHardware = field(init=False, repr=False, compare=False)
    # the numbers typed that cannot be true, flagged where they are made (a unit mistaken):
    # a step under a kernel's time, parameters, FLOPs per sample or watts under their floors
    implausible: tuple[Finding, ...] = field(init=False, repr=False, compare=False)
    # how a workload typed as a prefix or another name was read ("'llama2' read as
    # llama2_70b_lora (...)", as plan says it); none for its exact name
    read_as: tuple[str, ...] = field(init=False, repr=False, compare=False)
    named_workload: NamedWorkload | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        for name in ("step_ms", "batch"):  # given several times: a tuple; once: the value
            value = getattr(self, name)
            if isinstance(value, list | tuple):
                if not value:  # `step_ms=[]`: no value, not one out of range
                    raise FieldError(
                        name,
                        value,
                        "none given: give a number, or several (a step time with each batch)",
                    )
                object.__setattr__(self, name, tuple(value) if len(value) > 1 else value[0])
        check_ranges(self, RANGES, RULES)
        check_flags(self)  # explain, allow_flagged
        if self.nodes * self.devices_per_node > MAX_DEVICES:
            raise NamedError(
                f"{ref('nodes', self.nodes)} x {ref('gpus_per_node', self.devices_per_node)} "
                f"is {self.nodes * self.devices_per_node:,} devices: at most {MAX_DEVICES:,} "
                "are advised on"
            )
        for name in (*TEXT, "preset", *NAMED):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise TypeError(f"{name} must be text (a name or a path), not {value!r}")
        if self.strategy is not None:  # None: as benched (--bench), else ddp
            settle_choice(self, "strategy", STRATEGIES, OTHER_NAMES)
        for name, allowed in (("optimizer", OPTIMIZERS), ("precision", PRECISIONS)):
            value = getattr(self, name)
            same = SAME_STATE[name].get(str(value).lower())
            if same is not None:  # another tool's name for one of ours: ours named
                rule = f"must be one of {', '.join(allowed)}: {same[1]}: give {same[0]}"
                raise FieldError(name, value, rule)
            if value is not None:
                settle_choice(self, name, allowed)
        pair = (self.optimizer, self.precision)
        if None not in pair and pair not in state_bytes():
            known = [p for o, p in state_bytes() if o == self.optimizer and p in PRECISIONS]
            raise NamedError(
                f"{ref('optimizer', self.optimizer)} with {ref('precision', self.precision)}: "
                f"its bytes per parameter are known in {joined(known)} only"
            )
        _check_shape(self)
        settle_choice(self, "grad_bytes", GRAD_BYTES)
        settle_choice(self, "scaling", SCALINGS)
        # the device and links named: refused before any file is read (`--bench` missing
        # said after them), resolved once
        object.__setattr__(self, "hardware", named_hardware(self))
        typed = self.workload
        for name, resolve in NAMED.items():
            value = getattr(self, name)
            try:
                object.__setattr__(self, name, None if value is None else resolve(value))
            except UnknownNameError as exc:
                raise exc.as_field(name) from None
        read = "" if typed is None else workload_read_as(typed, str(self.workload))
        object.__setattr__(self, "read_as", (read,) if read else ())
        object.__setattr__(self, "named_workload", named_workload(self.workload, self.ruleset))
        if self.bench is None:  # with bench results, step times and batches: check_with_data
            _check_step_pairs(self)
        for first, second, both, why in PAIRS:
            if both(self):
                raise NamedError(f"{first} with {second}: {why}")
        # a step time with bench results is refused (``check_with_data``), its pairs unchecked
        steps = step_warnings(self.step_points) if self.bench is None else []
        typed = {name: getattr(self, name) for name in TYPED}
        object.__setattr__(self, "implausible", (*steps, *typed_warnings(typed)))


# The numbers typed checked against their floors and ceilings (``model.hardware.typed_warnings``)
TYPED = ("params", "flops_per_sample", "power_w", "busbw_gbs")
PRECISIONS = ("mixed", "fp32")
# Other tools' names of a strategy, an optimizer or a precision of ours (``data/advice_names.json``)
_NAMES = read_data("advice_names.json")
OTHER_NAMES: dict[str, str] = _NAMES["strategies"]
SAME_STATE: dict[str, dict[str, list[str]]] = _NAMES["state"]
# Fields of a name or a path; names said as the data spells them (``5.0``: ruleset 5.0.0)
TEXT = ("bench", "model", "device_name", "interconnect", "inter_node", "topo", "collectives")
NAMED: dict[str, Callable[[str], str]] = {
    "ruleset": resolve_ruleset,
    "workload": lambda name: resolve_workloads([name])[0],
}
# (option, other option, whether the request gives both in contradiction, why)
PAIRS: tuple[tuple[str, str, Callable[[RequestFields], bool], str], ...] = (
    (
        ref("scaling", "weak"),
        ref("global_batch"),
        lambda r: r.scaling == "weak" and r.global_batch is not None,
        "weak scaling keeps the per-device batch, a global batch kept at every count is "
        "strong scaling; give one or the other",
    ),
    (
        ref("interconnect"),
        ref("busbw_gbs"),
        lambda r: r.interconnect is not None and r.busbw_gbs is not None,
        f"a preset link or a custom one ({ref('busbw_gbs')}, {ref('latency_us')}); give one "
        "or the other",
    ),
    (
        ref("latency_us"),
        f"no {ref('busbw_gbs')}",
        lambda r: r.latency_us is not None and r.busbw_gbs is None,
        "the latency is a custom link's, given with its bus bandwidth (a preset has its "
        f"own): give {ref('busbw_gbs')} too, or leave it out",
    ),
    (
        ref("collectives"),
        f"{ref('interconnect')} or {ref('busbw_gbs')}",
        lambda r: r.collectives is not None and (r.interconnect or r.busbw_gbs) is not None,
        "the measured curves give the link; give one or the other",
    ),
    (
        ref("noise_scale"),
        ref("workload"),
        lambda r: r.noise_scale is not None and r.workload is not None,
        "the workload's reference convergence points give the convergence model; give "
        "one or the other",
    ),
    (
        ref("ruleset"),
        f"no {ref('workload')}",
        lambda r: r.ruleset is not None and r.workload is None,
        "the ruleset chooses a workload's reference convergence points: give "
        f"{ref('workload')} too, or leave it out",
    ),
    (
        ref("bucket_mb"),
        f"a sharded {ref('strategy')} (zero2, fsdp, hybrid)",
        lambda r: r.bucket_mb is not None and r.strategy not in (None, "ddp"),
        "the bucket size is DDP's, its gradients all-reduced in buckets; a sharded strategy "
        "communicates per unit it wraps, in no buckets: leave it out",
    ),
    (
        f"{ref('inter_node')} or {ref('nics_per_node')}",
        "no count past one node",  # one node, or a --max-devices within one
        lambda r: (
            (r.inter_node or r.nics_per_node) is not None
            and (r.max_devices or r.nodes * r.devices_per_node) <= r.devices_per_node
        ),
        f"they describe the network between nodes: give a {ref('max_devices')} above "
        f"{ref('gpus_per_node')} (or {ref('nodes')} above 1 and no {ref('max_devices')}), "
        "or leave them out",
    ),
)


def _check_step_pairs(request: RequestFields) -> None:
    """(step, batch) pairs of distinct batches; a fixed cost below the one step time only."""
    steps, batches, fixed_ms = request.step_ms, request.batch, request.fixed_ms
    if isinstance(steps, tuple) or isinstance(batches, tuple):
        count = len(steps) if isinstance(steps, tuple) else 1
        if not isinstance(batches, tuple) or len(batches) != count:
            given = len(batches) if isinstance(batches, tuple) else int(batches is not None)
            raise NamedError(
                f"{counted(count, 'step time')} ({ref('step_ms')}) "
                f"{agreeing(count, 'needs', 'need')} as many {ref('batch')} values, one "
                f"per step time (got {given or 'none'})"
            )
        if len(set(batches)) != len(batches):
            raise NamedError(f"the {ref('batch')} values of the step times must differ: {batches}")
        # a step at a larger batch does more work: never faster than at a smaller one
        ordered = sorted(request.step_points)
        for (b_small, t_small), (b_large, t_large) in itertools.pairwise(ordered):
            if t_large < t_small:
                raise NamedError(
                    f"{ref('step_ms', t_large)} at {ref('batch', b_large)} is faster than "
                    f"{t_small:g} at {ref('batch', b_small)}: a larger batch does more work; "
                    "measure both again (the same model, precision and device)"
                )
        if fixed_ms is not None:
            raise NamedError(f"give {ref('fixed_ms')} or step times at two batches, not both")
    elif fixed_ms is not None and steps is not None and fixed_ms >= steps:
        raise NamedError(
            f"{ref('fixed_ms', fixed_ms)} is not below {ref('step_ms', steps)}: the "
            "fixed per-step cost is the part of that step that does not shrink with the batch"
        )


def _check_shape(request: RequestFields) -> None:
    """A preset or a whole shape (its heads dividing its hidden size); checkpointing only with
    a shape."""
    if request.preset is not None:
        settle_choice(request, "preset", tuple(presets()))
        given = [ref(n) for n in ("layers", "hidden", "heads", "vocab") if getattr(request, n)]
        if given:
            raise NamedError(
                f"{ref('preset', request.preset)} with {joined(given)}: the preset is the "
                f"shape; give one or the other ({ref('seq_len')} may change its sequence)"
            )
        learned = presets()[request.preset].positions  # a table of positions: no more
        if learned and request.seq_len is not None and int(request.seq_len) > learned:
            raise NamedError(
                f"{ref('seq_len', int(request.seq_len))} is longer than {request.preset}'s "
                f"{learned:,} learned positions: it has no position past them; give "
                f"{ref('seq_len', learned)} or less"
            )
    given = [n for n in (*SHAPE_NUMBERS, "vocab") if getattr(request, n) is not None]
    if request.preset is None and given:
        missing = [ref(n) for n in SHAPE_NUMBERS if getattr(request, n) is None]
        if missing:
            raise NamedError(
                f"{joined([ref(n) for n in given])} without {joined(missing)}: a "
                "transformer's shape is its layers, hidden size, heads and sequence (or a "
                f"{ref('preset')})"
            )
        hidden, heads = int(request.hidden or 0), int(request.heads or 1)
        if hidden % heads:
            raise NamedError(
                f"{ref('hidden', hidden)} does not divide into {ref('heads', heads)} "
                f"({hidden / heads:.4g} each): each head takes an equal share of the hidden "
                "size"
            )
    if request.checkpointing is not None:
        if request.shape is None:
            raise NamedError(
                f"{ref('checkpointing', request.checkpointing)} without a transformer's shape "
                f"({ref('preset')} or {ref('layers')}): the activations it changes are "
                "counted from the shape"
            )
        settle_choice(request, "checkpointing", CHECKPOINTING)
