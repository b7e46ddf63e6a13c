"""What ``gpuscale bench`` is asked beside how each run is configured
(:class:`~gpuscale.bench.config.BenchConfig`): the results file, the models, the world
sizes and the nodes; each field's help (the option's) in its metadata. Pure Python at
import: the CLI builds its options from it at start."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpuscale.bench.cores import cores_said, usable_cores
from gpuscale.quantities import counted
from gpuscale.tables.raw_rounds import check_out
from gpuscale.tables.requests import (
    FieldError,
    comma_items,
    flag,
    option,
    oversubscribe_option,
    ref,
    repeatable_option,
    results_out_option,
)

RESULTS_OUT = Path("results.jsonl")
MAX_NODES = 100_000


@dataclass(frozen=True, kw_only=True, slots=True)
class SweepRequest:
    """A bench sweep's models, world sizes and nodes (planned by
    ``gpuscale.bench.sweep_plan.plan_bench``)."""

    out: Path = results_out_option(RESULTS_OUT)
    models: str | None = option(
        None,
        names=("--models",),
        help="Comma-separated models: ladder names (see --list), torchvision:NAME, timm:NAME, "
        "PKG.MODULE:FACTORY or FILE.py:FACTORY; default: the ladder.",
    )
    model: tuple[str, ...] | None = repeatable_option(
        str,
        names=("--model",),
        help="One more model (repeatable), e.g. mypkg.models:make.",
    )
    max_params: str | None = option(None, help="Largest model, e.g. 2M.")
    min_params: str | None = option(None, help="Smallest model, e.g. 1M.")
    nproc: str | None = option(
        None, help="Processes per node, e.g. 1,2,4 (default: 1, 2, 4, ... all devices)."
    )
    resume: bool = option(
        False,
        help="Skip runs already measured well in --out with the same configuration; "
        "failed and flagged runs are measured again (default: measure everything and "
        "append).",
    )
    oversubscribe: bool = oversubscribe_option()
    nnodes: int | None = option(
        None, help="Nodes (run this command on each; default 1, under srun the step's nodes)."
    )
    node_rank: int | None = option(
        None, help="This node's rank, 0 .. nnodes - 1 (default 0, under srun Slurm's)."
    )
    rdzv_endpoint: str | None = option(
        None,
        help="HOST:PORT of node 0 (torchrun c10d rendezvous; under srun the step's first "
        "node at a port of the job's).",
    )
    list_models: bool = flag("--list", help="List the models and stop.")

    def __post_init__(self) -> None:
        if self.list_models:  # --list writes nothing, but never names a raw round's file
            check_out("out", self.out)
        else:  # before any model is built
            from gpuscale.bench.results_file import BENCH_FILE, check_results_out  # lazy: numpy

            check_results_out("out", self.out, BENCH_FILE, RESULTS_OUT)
        if self.models is not None:
            comma_items("models", self.models, "mlp-0.2m,cnn-0.3m", "name")
        check_nodes(self.nnodes, self.node_rank)
        check_endpoint(self.rdzv_endpoint)

    def model_names(self) -> list[str]:
        """The models asked for, ``--models``'s then each ``--model``; none: the ladder."""
        return [*(self.models.split(",") if self.models else []), *(self.model or ())]

    def model_options(self) -> list[str]:
        """The option each of :meth:`model_names` was given with (``--models``, ``--model``)."""
        given = len(self.models.split(",")) if self.models else 0
        return ["--models"] * given + ["--model"] * len(self.model or ())


def check_endpoint(endpoint: str | None) -> tuple[str, int] | None:
    """(host, port) of a rendezvous endpoint; :class:`FieldError` for one that is no
    ``HOST:PORT`` with a port from 1 to 65535, checked before launch (torchrun crashes on
    a port past 65535 after a row is written, and waits without end on a bare host
    name)."""
    if endpoint is None:
        return None
    host, colon, port = endpoint.strip().rpartition(":")
    if not colon or not host.strip("[]") or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise FieldError(
            "rdzv_endpoint",
            endpoint,
            "must be HOST:PORT, the port from 1 to 65535 (node 0's address, e.g. 10.0.0.1:29500)",
        )
    return host.strip("[]"), int(port)


def check_nodes(nnodes: int | None, node_rank: int | None) -> None:
    """:class:`FieldError` for a node count or rank out of range (the request's and the
    sweep's one rule; None: not given, Slurm's or the default then)."""
    if nnodes is not None and not 1 <= nnodes <= MAX_NODES:
        raise FieldError("nnodes", nnodes, f"must be a whole number from 1 to {MAX_NODES:,}")
    if node_rank is None:
        return
    if nnodes is None and not 0 <= node_rank < MAX_NODES:  # the nodes Slurm's, or one
        raise FieldError("node_rank", node_rank, f"must be from 0 to {MAX_NODES - 1:,}")
    if nnodes is not None and not 0 <= node_rank < nnodes:
        raise FieldError(
            "node_rank", node_rank, f"must be from 0 to {nnodes - 1}, below {ref('nnodes', nnodes)}"
        )


def check_threads(threads: int, nproc: int, device: str, oversubscribe: bool) -> None:
    """Refuse ``--threads`` that put more compute threads on a CPU host than it has cores
    (``threads`` per process times ``nproc`` processes), unless ``oversubscribe``: as
    :func:`check_devices` refuses processes, they would measure the contention; 0 (the
    host's cores shared by the processes) never does."""
    cores = usable_cores()
    if device != "cpu" or not threads or threads * nproc <= cores or oversubscribe:
        return
    fits = cores // nproc
    raise ValueError(
        f"--threads {threads} x {counted(nproc, 'process')} runs {threads * nproc:,} compute "
        f"threads on {cores_said(cores)}: they would share cores and measure "
        "the contention, not the scaling; give --threads "
        + (f"at most {fits} " if fits else "")
        + "(0: the host's cores shared by the processes), or add --oversubscribe to run them "
        "anyway"
    )
