"""A bench sweep planned before it runs, and what it says when it ends: the models chosen
(their sizes counted in guarded children), the :class:`SweepConfig` they run under, and
the sentences ``gpuscale bench`` prints about them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from gpuscale.bench.config import BenchConfig, ModelError
from gpuscale.bench.ladder_names import checked_names
from gpuscale.bench.probe import count_parameters
from gpuscale.bench.results import BenchFile, after_sweep
from gpuscale.bench.runner import (
    LAUNCH_GRACE_S,
    Progress,
    SweepConfig,
    SweepReport,
    check_rendezvous,
    device_kind,
    run_sweep,
    world_sizes,
)
from gpuscale.bench.slurm import batch_shell_note, slurm_task
from gpuscale.bench.sweep_request import SweepRequest
from gpuscale.bench.sweep_said import kept_note
from gpuscale.quantities import BadQuantity, counted, filled, parse_size
from gpuscale.tables.commands import quoted_path
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
    text that is not is that field's :class:`FieldError` (bounds the wrong way round
    would otherwise select no model, without saying why)."""
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


def plan_sweep(chosen: Chosen, broken: Broken, **settings: object) -> SweepConfig:
    """The :class:`SweepConfig` of the chosen models (``settings``: its other fields); a
    ``ValueError`` when the size bounds left no model at all."""
    config = SweepConfig(models=tuple(n for n, _ in chosen), **settings)
    if not (config.models or broken):
        raise ValueError("no model selected (check --models / --max-params)")
    return config


def plan_sentence(config: SweepConfig, broken: Broken, said: tuple[str, ...] = ()) -> str:
    """``6 configurations: 3 models x 2 world sizes`` and the models that cannot be
    built; then, a line each, how the nodes were read (``said``: a Slurm step's) and the
    GPU options given that do nothing on the device the ranks run on here
    (``BenchConfig.unapplied``: ``--tf32`` under ``--backend auto`` on a host without a
    GPU)."""
    total = len(config.models) * len(config.nproc)
    counted_runs = (
        f"{counted(total, 'configuration')}: {counted(len(config.models), 'model')} x "
        f"{counted(len(config.nproc), 'world size')}"
    )
    if broken:
        counted_runs += f"; {counted(len(broken), 'model')} cannot be built"
    unapplied = config.bench.unapplied(device_kind(config.bench.backend))
    return "\n".join([counted_runs, *said, *filter(None, [waits(config)]), *unapplied])


def waits(config: SweepConfig) -> str:
    """On several nodes, what each world size waits for before its first step (silent
    otherwise: torchrun's rendezvous prints nothing while a node is missing): ``node 1 of
    2 (node rank 0): each world size starts once all 2 nodes have joined at host:29500; a
    node that never joins ends it as timeout after 660 s`` (``--timeout`` x ``--repeat``,
    and the minute allowed torchrun to come up); "" on one node. Nodes are counted from 1
    as the Slurm line above it counts them, the 0-based ``--node-rank`` beside."""
    if config.nnodes < 2:
        return ""
    limit_s = config.bench.timeout_s * config.bench.repeat + LAUNCH_GRACE_S
    rank = config.node_rank
    return (
        f"node {rank + 1} of {config.nnodes} (node rank {rank}): each world size starts once all "
        f"{config.nnodes} nodes have joined at {config.rdzv_endpoint}; a node that never "
        f"joins ends it as timeout after {limit_s:,.0f} s"
    )


def done_sentence(report: SweepReport, out_file: Path, nnodes: int) -> str:
    """What the sweep did: runs measured, rows appended (on a multi-node run only the node
    holding global rank 0 writes its rows, :data:`WRITER`), skipped and failed."""
    summary = f"this node wrote no rows: {WRITER}"  # the node holding global rank 0 does
    if report.appended or nnodes == 1:
        rows = counted(report.appended, "row")
        summary = f"{report.measured} measured, {rows} appended to {quoted_path(out_file)}"
    skipped = filled(", {} skipped (--resume)", report.skipped)  # only under --resume
    return f"{summary}{skipped}, {len(report.failures)} failed"


@dataclass(frozen=True, slots=True)
class Nodes:
    """The nodes a sweep runs on: as given, else a Slurm step's, else one; ``said``: how
    a Slurm job's were read; ``aside``: why this Slurm task runs nothing (another task of
    its node launches the node's processes); ``rdzv_id``: the rendezvous' run id, the
    Slurm job's own under Slurm (two jobs whose ports coincide never join one rendezvous)."""

    nnodes: int
    node_rank: int
    rdzv_endpoint: str | None
    said: tuple[str, ...] = ()
    aside: str | None = None
    rdzv_id: str = "gpuscale"


def nodes_of(request: SweepRequest, environ: Mapping[str, str]) -> Nodes:
    """The sweep's nodes: each of ``--nnodes``, ``--node-rank`` and ``--rdzv-endpoint``
    as given, else, under srun, the Slurm step's (``gpuscale.bench.slurm``), else one
    node. A host list Slurm set that cannot be read is a ``ValueError``."""
    task = slurm_task(environ)
    if task is None:
        note = batch_shell_note(environ)
        return Nodes(
            request.nnodes or 1,
            request.node_rank or 0,
            request.rdzv_endpoint,
            (f"note: {note}",) if note else (),
        )
    if task.local_task:
        return Nodes(1, 0, None, aside=task.aside())
    nnodes = request.nnodes or task.nnodes  # a count given is at least 1
    rank = task.node_rank if request.node_rank is None else request.node_rank
    hosts = ", ".join(task.nodes[:4])
    if task.nnodes > 4:
        hosts += ", ..."
    said = f"Slurm job {task.job_id}: node {rank + 1} of {nnodes} ({hosts})"
    if nnodes == 1:  # torchrun's standalone launch: no rendezvous
        return Nodes(nnodes, rank, request.rdzv_endpoint, (said,))
    endpoint = request.rdzv_endpoint or task.rendezvous
    said = f"{said}, rendezvous at {endpoint}"
    return Nodes(nnodes, rank, endpoint, (said,), rdzv_id=f"gpuscale-slurm-{task.job_id}")


@dataclass(frozen=True, slots=True)
class Planned:
    """The models chosen (name, parameters), those that cannot be built with why, the
    nodes, and the sweep they run under (None with ``--list`` or a Slurm task that stands
    aside, ``nodes.aside``: nothing runs)."""

    chosen: Chosen
    broken: Broken
    config: SweepConfig | None
    nodes: Nodes

    @property
    def said(self) -> str:
        """What ``gpuscale bench`` says before it runs (:func:`plan_sentence`; a Slurm task
        that stands aside, why; ``--list``, nothing)."""
        if self.config is None:
            return self.nodes.aside or ""
        return plan_sentence(self.config, self.broken, self.nodes.said)


def plan_bench(
    request: SweepRequest, bench: BenchConfig, environ: Mapping[str, str] = os.environ
) -> Planned:
    """``gpuscale bench``'s plan: the size bounds, the model names (before torch is
    imported: :func:`~gpuscale.bench.ladder_names.checked_names`) and world sizes checked
    before any model is built (a bad one is that field's :class:`FieldError`), the nodes
    (:func:`nodes_of`, from ``environ``, default this process's), the models chosen
    (:func:`choose_models`), and their :class:`SweepConfig` (:func:`plan_sweep`)."""
    check_bounds(request.max_params, request.min_params)
    options = request.model_options()  # the option each name came with: a refusal names it
    names = checked_names(request.model_names(), options)  # before torch loads: world_sizes
    for name, option in zip(names, options, strict=True):
        source = name.partition(":")[0]  # a FILE.py not there names no model: no failed row
        if source.endswith(".py") and not os.path.isfile(source):
            raise ModelError(f"{option} {name}: no file {quoted_path(os.path.abspath(source))}")
    nproc = world_sizes(request.nproc)
    nodes = nodes_of(request, environ)
    if nodes.aside and not request.list_models:
        return Planned([], [], None, nodes)
    if not request.list_models:  # before the models are built (seconds with torch)
        check_rendezvous(nodes.nnodes, nodes.rdzv_endpoint)
    chosen, broken = choose_models(names, request.max_params, request.min_params, bench)
    if request.list_models:
        return Planned(chosen, broken, None, Nodes(1, 0, None))
    config = plan_sweep(
        chosen,
        broken,
        nproc=nproc,
        out=request.out,
        bench=bench,
        resume=request.resume,
        nnodes=nodes.nnodes,
        node_rank=nodes.node_rank,
        rdzv_endpoint=nodes.rdzv_endpoint,
        rdzv_id=nodes.rdzv_id,
        oversubscribe=request.oversubscribe,
    )
    return Planned(chosen, broken, config, nodes)


def models_table(planned: Planned) -> list[dict[str, object]]:
    """``bench --list``: each model with its family and size, those that cannot be built
    last, each with why (``why not built``, a column only where one cannot be: the cause
    a sweep would record, said before any sweep is run)."""
    from gpuscale.bench.models import family_of  # lazy: torch (the model ladder)

    why = {"why not built": ""} if planned.broken else {}
    rows: list[dict[str, object]] = [
        {"model": n, "family": family_of(n), "params": p, **why} for n, p in planned.chosen
    ]
    rows += [
        {"model": n, "family": "cannot be built", "params": None, "why not built": str(exc)}
        for n, exc in planned.broken
    ]
    return rows


@dataclass(frozen=True, slots=True)
class Ran:
    """A planned sweep once run: its report, the lines said as it ends (what it did, then
    what an interrupted sweep kept), the refusal where no model asked for could be built
    (its error rows are written; "" otherwise) and the exit status: 130 interrupted, 1 a
    run failed, else 0; ``results``: the results file read back for the sweep's table
    (``results.after_sweep``; None where no model ran, each reason said already, or the
    file cannot be shown) and ``results_notes``: what is said of the file first."""

    report: SweepReport
    closing: tuple[str, ...]
    refusal: str
    status: int
    results: BenchFile | None = None
    results_notes: tuple[str, ...] = ()


def run_planned(planned: Planned, on_event: Progress | None = None) -> Ran:
    """Run a :func:`plan_bench` sweep (``planned.config`` set) and say how it ended;
    raises what :func:`gpuscale.bench.runner.run_sweep` raises."""
    config = planned.config
    if config is None:
        raise ValueError("nothing to run: --list, or a Slurm task that stands aside")
    sizes, broken = dict(planned.chosen), dict(planned.broken)
    report = run_sweep(config, sizes, on_event=on_event, broken=broken)
    closing = [done_sentence(report, config.out, config.nnodes)]
    refusal = ""
    if not planned.chosen:
        refusal = "no model could be built: " + "; ".join(str(why) for why in broken.values())
    elif report.interrupted:
        closing.append("interrupted" + kept_note(report.appended, config.out))
    status = 0
    if report.failures:
        status = 1
    if report.interrupted:
        status = 130
    results, notes = after_sweep(config.out) if planned.chosen else (None, [])
    return Ran(report, tuple(closing), refusal, status, results, tuple(notes))
