"""The CPU cores a bench may compute on: the host's, less those its CPU affinity leaves
out (a Slurm job step's cpuset, ``taskset``, a container's ``--cpuset-cpus``). Threads and
processes sized by the host's count where the affinity allows fewer cores would share
those cores and measure the contention, not the scaling."""

from __future__ import annotations

import os

from gpuscale.quantities import counted


def host_cores() -> int:
    """The host's CPU cores (``os.cpu_count()``), at least 1."""
    return os.cpu_count() or 1


def usable_cores() -> int:
    """The cores this process may run on: the host's, at most those its CPU affinity
    allows (``os.sched_getaffinity``, where the platform has it)."""
    allowed = allowed_cpus()
    return host_cores() if allowed is None else len(allowed)


def allowed_cpus() -> frozenset[int] | None:
    """The CPUs this process may run on where its affinity allows fewer than the host has
    (a Slurm job step on a shared node), else None: the whole host."""
    try:
        allowed = frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None
    return allowed if 0 < len(allowed) < host_cores() else None


def cores_said(cores: int) -> str:
    """``cores`` (from :func:`usable_cores`) as a refusal names them: ``this host's 2
    cores``, or where the affinity allows fewer, ``the 1 core this process may run on (its
    CPU affinity: a Slurm job's, taskset's; the host has 2)``."""
    host = host_cores()
    if cores >= host:
        return f"this host's {counted(cores, 'core')}"
    return (
        f"the {counted(cores, 'core')} this process may run on (its CPU affinity: a Slurm "
        f"job's, taskset's; the host has {host:,})"
    )
