"""The ranks of a torchrun job: this rank's device, the process group every rank joins and
leaves together, and where the ranks run (their hosts). Used by the bench worker and the
collectives worker."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from typing import NoReturn, TypeVar

import torch
import torch.distributed as dist

from gpuscale.interconnect.nccl import backend_for

T = TypeVar("T")


def pick_device(backend: str) -> torch.device:
    """This rank's device: with every GPU visible, the one at ``LOCAL_RANK``; with one
    visible per process (Slurm, Kubernetes), that one."""
    if backend == "gloo" or not torch.cuda.is_available():
        return torch.device("cpu")
    count, local = torch.cuda.device_count(), int(os.environ.get("LOCAL_RANK", "0"))
    if count == 1:
        index = 0
    elif local < count:
        index = local
    else:
        raise RuntimeError(f"LOCAL_RANK {local} but only {count} GPUs are visible")
    torch.cuda.set_device(index)
    return torch.device("cuda", index)


@contextlib.contextmanager
def process_group(backend: str, timeout_s: float) -> Iterator[torch.device]:
    """The process group joined (NCCL on a GPU, else gloo) for the ``with`` block, which
    gets this rank's device; every rank leaves together."""
    device = pick_device(backend)
    dist.init_process_group(backend_for(device.type), timeout=timedelta(seconds=timeout_s))
    try:
        yield device
        # Every rank leaves together: a rank that tore down its links while another was
        # still in its last collective made that one abort (SIGABRT) after the row was
        # written, seen on two nodes of one loaded host.
        dist.barrier()
    finally:
        dist.destroy_process_group()


def end_rank(main: Callable[[], int]) -> NoReturn:
    """Run a rank's ``main`` and end the process. A rank that finished (``main`` returned
    0: its rows written and flushed, its process group left) ends with its output flushed
    and ``os._exit(0)``, without the interpreter's teardown, where torch 2.13's gloo
    threads abort the process now and then ("terminate called without an active
    exception", SIGABRT) after its work is done: the launch then read as a crash. A rank
    that failed (``main`` raised, or returned a nonzero code) ends the ordinary way: its
    traceback printed, a nonzero exit."""
    code = main()
    if code:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # closed, or its reader gone
            stream.flush()
    os._exit(0)


@dataclass(frozen=True, slots=True)
class Host:
    """Where this rank runs: the ranks of the whole job on its host (every node there),
    whether it is the host's first rank (which reads the host-wide RAPL counter), and
    the nodes (launchers) on the host."""

    ranks_on_host: int = 1
    first_on_host: bool = True
    nodes_on_host: int = 1

    @staticmethod
    def find() -> Host:
        """From every rank's host name (one all-gather after the process group is up)."""
        names = gather(os.uname().nodename)
        mine = names[dist.get_rank()]
        ranks = sum(n == mine for n in names)
        local = max(1, int(os.environ.get("LOCAL_WORLD_SIZE", "1")))
        return Host(ranks, names.index(mine) == dist.get_rank(), max(1, ranks // local))


def gather(values: T) -> list[T]:
    """Every rank's ``values``, in rank order (one all-gather of Python objects)."""
    out: list[T] = [values] * dist.get_world_size()  # each replaced by the rank's own
    dist.all_gather_object(out, values)
    return out


def agreed_sweep_id(ids: list[tuple[int, str]]) -> str:
    """The one sweep id every node's rows and summary use, from every rank's (``--node-rank``
    of its node, its runner's id): the id of the node given ``--node-rank`` 0 (its runner
    writes the rows of models that failed), else global rank 0's. Each node's runner makes
    its own id; torchrun's rendezvous numbers the nodes its own way, so the writer (global
    rank 0) may sit on any of them."""
    return next((sweep for node, sweep in ids if node == 0), ids[0][1])
