"""Options of one advice request that contradict each other, or that apply only with (or
only without) bench results: each refused in one line naming both, never resolved
silently (``--scaling weak --global-batch 128``, ``--interconnect pcie-phb --busbw-gbs
50``, ``--family cnn`` without ``--bench``: each is refused, not half obeyed).

Every field of :class:`~gpuscale.advice.request.AdviceRequest` either acts in every
advice, or is in :data:`PAIRS`, :data:`BENCH_ONLY` or :data:`NUMBERS_ONLY` below
(``tests/advice/test_conflicts.py`` goes through them all)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from gpuscale.quantities import joined
from gpuscale.tables.requests import NamedError, ref


class Options(Protocol):
    """The fields of an ``AdviceRequest`` these checks read (the request checks its pairs
    as it is made, so this module cannot import it)."""

    @property
    def scaling(self) -> str: ...
    @property
    def global_batch(self) -> int | None: ...
    @property
    def interconnect(self) -> str | None: ...
    @property
    def busbw_gbs(self) -> float | None: ...
    @property
    def latency_us(self) -> float | None: ...
    @property
    def collectives(self) -> str | None: ...
    @property
    def noise_scale(self) -> float | None: ...
    @property
    def workload(self) -> str | None: ...
    @property
    def ruleset(self) -> str | None: ...
    @property
    def inter_node(self) -> str | None: ...
    @property
    def nics_per_node(self) -> int | None: ...
    @property
    def nodes(self) -> int: ...
    @property
    def gpus_per_node(self) -> int: ...
    @property
    def max_devices(self) -> int | None: ...
    @property
    def params(self) -> float | None: ...
    @property
    def model(self) -> str | None: ...


# (option, other option, whether the request gives both in contradiction, why), each
# field named by ``ref`` (``--scaling weak`` on the command line, ``scaling='weak'`` from
# Python). The request's own checks refuse step times and --fixed-ms together.
PAIRS: tuple[tuple[str, str, Callable[[Options], bool], str], ...] = (
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
        f"{ref('inter_node')} or {ref('nics_per_node')}",
        "one node",
        lambda r: (r.inter_node or r.nics_per_node) is not None and not _several_nodes(r),
        f"they describe the network between nodes: give {ref('nodes')} (or a "
        f"{ref('max_devices')} above {ref('gpus_per_node')}), or leave them out",
    ),
)

# Fields that describe bench results: (field, its name (``ref``), why without them).
BENCH_ONLY: tuple[tuple[str, str, str], ...] = (
    ("model", ref("model"), "a model of the bench results"),
    ("family", ref("family"), f"whose measured rate a {ref('params')} model takes"),
    ("allow_flagged", ref("allow_flagged"), "which bench runs are used"),
)
# Fields that describe a model given by numbers: (field, its name (``ref``)).
NUMBERS_ONLY: tuple[tuple[str, str], ...] = (
    ("step_ms", ref("step_ms")),
    ("device_name", ref("device_name")),
    # a transformer's shape gives a model by its numbers (the bench measured its own)
    *((f, ref(f)) for f in ("preset", "layers", "hidden", "heads", "seq_len", "vocab")),
    ("checkpointing", ref("checkpointing")),
)


def _several_nodes(request: Options) -> bool:
    most = request.max_devices or 0
    return request.nodes > 1 or most > request.gpus_per_node * request.nodes


def check_pairs(request: Options) -> None:
    """``NamedError`` naming both options of the first pair the request contradicts."""
    for first, second, both, why in PAIRS:
        if both(request):
            raise NamedError(f"{first} with {second}: {why}")


def check_with_data(request: Options, *, bench: bool) -> None:
    """``NamedError`` for an option that does not apply with (``bench``) or without bench
    results, naming it and what it applies to."""
    if not bench:
        given = [(o, why) for f, o, why in BENCH_ONLY if getattr(request, f) not in (None, False)]
        if given:
            option, why = given[0]
            raise NamedError(
                f"{option} without {ref('bench')}: it says {why}; give bench results (a file "
                f"as {ref('bench')}), or leave it out"
            )
        return
    unused = [o for f, o in NUMBERS_ONLY if getattr(request, f) is not None]
    if unused:  # never silently ignored: an option unused is refused
        raise NamedError(
            f"{joined(unused)}: for a model given by numbers; with bench results the "
            "step and the device are measured: give one or the other"
        )
    if request.params is not None and request.model is not None:
        raise NamedError(  # two questions: one at a time
            f"give {ref('model', request.model)} (a model the bench measured) or "
            f"{ref('params')} (a model by its numbers, advised from its family's "
            "calibration), not both"
        )
    if request.params is None:
        for field in ("family", "flops_per_sample"):
            if getattr(request, field) is not None:
                raise NamedError(
                    f"{ref(field)} with {ref('bench')} but no {ref('params')}: it describes a "
                    "model given by its numbers; the bench measured its own models' (give "
                    f"{ref('params')} too, or leave it out)"
                )
