"""Running a collectives sweep from the command line's side: the torchrun command, the
run, what NCCL said it chose (its ``NCCL_DEBUG=INFO`` log, appended as a record), and the
sweep read back. The timing itself is ``gpuscale.bench.collectives`` (the worker)."""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from gpuscale.bench.collectives_config import SCHEMA, CollectivesConfig
from gpuscale.bench.results import COLLECTIVES_FILE, ResultsError, check_writable
from gpuscale.bench.runner import cuda_devices, device_kind, torchrun_command
from gpuscale.bench.telemetry import topology_here
from gpuscale.hardware.links import PRESETS
from gpuscale.interconnect.nccl import check_env, parse_debug_log
from gpuscale.interconnect.records import Sweeps, read_sweeps
from gpuscale.interconnect.verdict import judge
from gpuscale.sources.processes import lifeline


class SweepError(Exception):
    """A sweep that could not run or left no measurement (the message says why)."""


@dataclass(frozen=True, slots=True)
class SweepRun:
    """A finished sweep: its id, every sweep of the file (for the verdict), this one's
    rows, the device kind (``cuda``/``cpu``) and the environment it ran with."""

    sweep_id: str
    sweeps: Sweeps
    latest: Any
    device: str
    env: dict[str, str]


def _check_world(world: int, device: str) -> None:
    """A collective needs two or more ranks, each on its own device on a GPU host."""
    visible = cuda_devices() if device == "cuda" else None
    if world < 2:
        shown = f"{visible} CUDA device(s) visible" if visible is not None else "1 process"
        raise SweepError(
            f"a collective needs two or more devices ({shown}, --nproc {world}): nothing "
            "measured, no sweep written. Run it where 2 or more GPUs are visible, or time "
            "CPU processes with --backend gloo --nproc 2; `gpuscale advise` without "
            "--collectives takes the link from --interconnect (a preset) instead"
        )
    if visible is not None and world > visible:
        raise SweepError(
            f"{visible} CUDA device(s) visible; --nproc {world} needs {world} (one per "
            f"process): give --nproc up to {visible}, or time CPU processes with --backend gloo"
        )


def run_collectives(config: CollectivesConfig, out_file: Path, world: int) -> SweepRun:
    """Run ``config`` on ``world`` local processes under torchrun, appending to
    ``out_file`` (JSONL). Raises :class:`SweepError` before starting when the file cannot
    be written or the sizes are inverted, and after when the run failed."""
    _check_world(world, device_kind(config.backend))  # before the file is touched
    try:  # before torchrun starts: its own failure would only say "error_file: <N/A>"
        check_writable(out_file, holds=COLLECTIVES_FILE)
    except ResultsError as exc:
        raise SweepError(str(exc)) from None
    device = device_kind(config.backend)
    if config.min_bytes > config.largest(device):
        raise SweepError(
            f"the smallest message ({config.min_bytes} B) is above the largest "
            f"({config.largest(device)} B)"
        )
    sweep_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    command = [
        *torchrun_command(world, "gpuscale.bench.collectives"),
        *("--out", str(out_file), *config.worker_args(device, sweep_id)),
    ]
    env = {**os.environ}
    if device == "cuda" and "NCCL_DEBUG" not in env:
        env["NCCL_DEBUG"] = "INFO"  # what NCCL chose goes into the sweep's record
    # torchrun dies with this process (SIGKILL included), and its ranks watch this process
    # too: one still starting when torchrun died (before it could arm its own signal) ends
    env["GPUSCALE_RUNNER_PID"] = str(os.getpid())
    done = subprocess.run(command, capture_output=True, text=True, env=env, preexec_fn=lifeline())
    if done.returncode != 0:
        tail = [x for x in (done.stderr or done.stdout).strip().splitlines() if x.strip()][-3:]
        raise SweepError("the collectives run failed: " + " | ".join(tail))
    nccl = parse_debug_log(done.stdout + done.stderr)
    if nccl.version or nccl.transports:
        record = {"schema": SCHEMA, "kind": "nccl", "sweep_id": sweep_id, "nccl": nccl.to_dict()}
        with out_file.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
    sweeps = read_sweeps(out_file)
    latest = sweeps.of(sweep_id)
    if latest.empty:
        raise SweepError(f"no measurement of sweep {sweep_id} in {out_file}")
    return SweepRun(sweep_id, sweeps, latest, device, env)


@dataclass(frozen=True)
class InterconnectCheck:
    """A collectives sweep and what it says of the interconnect: ``settings`` (NCCL
    environment findings) and ``verdicts`` (one sentence per collective), in words."""

    run: SweepRun
    settings: list[str]
    verdicts: list[str]


def check_interconnect(
    config: CollectivesConfig,
    out_file: Path,
    world: int,
    *,
    topo_file: Path | None = None,
    gpu: str | None = None,
    preset: str | None = None,
) -> InterconnectCheck:
    """Run a collectives sweep on ``world`` processes (rows appended to ``out_file``) and
    judge it: against ``preset`` (a link preset), else the topology of ``topo_file`` (a
    saved ``nvidia-smi topo -m``, read before the sweep), else NVML's on GPUs. Raises
    ValueError (an unknown preset, an unreadable topology file) and :class:`SweepError`."""
    if preset and preset not in PRESETS:
        raise ValueError(f"unknown interconnect {preset!r}; known: {', '.join(PRESETS)}")
    saved = topology_here(topo_file, gpu) if topo_file else None
    done = run_collectives(config, out_file, world)
    topology = saved if topo_file else (topology_here(None, gpu) if done.device == "cuda" else None)
    nvlink = bool(topology and topology.slowest_link() == "NV")
    return InterconnectCheck(
        run=done,
        settings=[f.message for f in check_env(done.env, nvlink=nvlink)],
        verdicts=[
            v.sentence() for v in judge(done.sweeps, topology=topology, preset=preset, env=done.env)
        ],
    )
