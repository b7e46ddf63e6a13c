"""A bench sweep planned before it runs, and what it says when it ends: the models chosen
(their sizes counted in guarded children), the :class:`SweepConfig` they run under, and
the sentences ``gpuscale bench`` prints about them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpuscale.bench.config import BenchConfig, ModelError
from gpuscale.bench.probe import count_parameters
from gpuscale.bench.runner import SweepConfig, SweepReport, device_kind, world_sizes
from gpuscale.bench.sweep_request import SweepRequest
from gpuscale.quantities import BadQuantity, counted, parse_size
from gpuscale.tables.requests import FieldError

# Which node's command appends a multi-node sweep's rows (docs/interconnect.md says the same):
# torch.distributed.elastic's dynamic rendezvous gives ranks in the order of
# sorted(participants), each a _NodeDesc(addr, pid, local_id); --node-rank is not read.
WRITER = (
    "the node holding global rank 0 appends them, and torchrun's c10d rendezvous numbers "
    "the nodes by host address and launcher process id, not by --node-rank (on one host "
    "either command may be it)"
)

Chosen = list[tuple[str, int]]
Broken = list[tuple[str, ModelError]]


def check_bounds(max_params: str | None, min_params: str | None) -> None:
    """Each size bound given is a size (``2M``), the smallest no larger than the largest;
    text that is not is that field's :class:`FieldError` (bounds the wrong way round said
    only "no model selected": a user walk)."""
    sizes = {}
    for field, size in (("max_params", max_params), ("min_params", min_params)):
        try:
            if size:
                sizes[field] = parse_size(size)
        except BadQuantity as exc:
            raise FieldError(field, size, exc.rule) from None
    if len(sizes) == 2 and sizes["min_params"] > sizes["max_params"]:
        raise FieldError("min_params", min_params, f"is above --max-params {max_params}")


def choose_models(
    names: list[str], max_params: str | None, min_params: str | None, bench: BenchConfig
) -> tuple[Chosen, Broken]:
    """The models to run (name, parameters), smallest first, within the size bounds, and
    those that cannot be built with why; a model's own code runs in a guarded child
    (:func:`gpuscale.bench.probe.count_parameters`, the bench's timeout and memory limit)."""

    from gpuscale.bench import models as ladder  # lazy: torch, only to choose the models

    def count(name: str) -> int:
        return count_parameters(
            name, timeout_s=bench.timeout_s, memory_bytes=bench.memory_limit_bytes
        )

    return ladder.sort_models(names or None, max_params, min_params, count=count)


def plan_sweep(chosen: Chosen, broken: Broken, **settings: Any) -> SweepConfig:
    """The :class:`SweepConfig` of the chosen models (``settings``: its other fields); a
    ``ValueError`` when the size bounds left no model at all."""
    config = SweepConfig(models=tuple(n for n, _ in chosen), **settings)
    if not (config.models or broken):
        raise ValueError("no model selected (check --models / --max-params)")
    return config


def plan_sentence(config: SweepConfig, broken: Broken) -> str:
    """``6 configurations: 3 models x 2 world sizes`` and the models that cannot be
    built; then, a line each, the GPU options given that do nothing on the device the
    ranks run on here (``BenchConfig.unapplied``: ``--tf32`` under ``--backend auto`` on
    a host without a GPU)."""
    total = len(config.models) * len(config.nproc)
    said = (
        f"{counted(total, 'configuration')}: {counted(len(config.models), 'model')} x "
        f"{counted(len(config.nproc), 'world size')}"
        + (f"; {counted(len(broken), 'model')} cannot be built" if broken else "")
    )
    return "\n".join([said, *config.bench.unapplied(device_kind(config.bench.backend))])


def done_sentence(report: SweepReport, out_file: Path, nnodes: int) -> str:
    """What the sweep did: runs measured, rows appended (on a multi-node run only the node
    holding global rank 0 writes its rows, :data:`WRITER`), skipped and failed."""
    if report.appended or nnodes == 1:
        rows = f"{report.appended} row{'' if report.appended == 1 else 's'}"
        summary = f"{report.measured} measured, {rows} appended to {out_file}"
    else:  # the node holding global rank 0 writes every row
        summary = f"this node wrote no rows: {WRITER}"
    # skipped only under --resume: "0 skipped (--resume)" was said of sweeps without it
    skipped = f", {report.skipped} skipped (--resume)" if report.skipped else ""
    return f"{summary}{skipped}, {len(report.failures)} failed"


@dataclass(frozen=True, slots=True)
class Planned:
    """The models chosen (name, parameters), those that cannot be built with why, and the
    sweep they run under (None with ``--list``: nothing runs)."""

    chosen: Chosen
    broken: Broken
    config: SweepConfig | None


def plan_bench(request: SweepRequest, bench: BenchConfig) -> Planned:
    """``gpuscale bench``'s plan: the size bounds and world sizes checked before any model
    is built (a bad one is that field's :class:`FieldError`), the models chosen
    (:func:`choose_models`), and their :class:`SweepConfig` (:func:`plan_sweep`)."""
    check_bounds(request.max_params, request.min_params)
    nproc = world_sizes(request.nproc)
    names = request.model_names()
    chosen, broken = choose_models(names, request.max_params, request.min_params, bench)
    if request.list_models:
        return Planned(chosen, broken, None)
    config = plan_sweep(
        chosen,
        broken,
        nproc=nproc,
        out=request.out,
        bench=bench,
        resume=request.resume,
        nnodes=request.nnodes,
        node_rank=request.node_rank,
        rdzv_endpoint=request.rdzv_endpoint,
        oversubscribe=request.oversubscribe,
    )
    return Planned(chosen, broken, config)


def models_table(planned: Planned) -> list[dict[str, object]]:
    """``bench --list``: each model with its family and size, those that cannot be built
    last."""
    from gpuscale.bench.models import family_of  # lazy: torch (the model ladder)

    rows: list[dict[str, object]] = [
        {"model": n, "family": family_of(n), "params": p} for n, p in planned.chosen
    ]
    rows += [{"model": n, "family": "cannot be built", "params": None} for n, _ in planned.broken]
    return rows
