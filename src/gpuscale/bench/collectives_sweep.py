"""Running a collectives sweep from the command line's side: the torchrun command, the
run, what NCCL said it chose (its ``NCCL_DEBUG=INFO`` log, appended as a record), and the
sweep read back. The timing itself is ``gpuscale.bench.collectives`` (the worker)."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gpuscale.bench.collectives_config import (
    SCHEMA,
    CheckRequest,
    CollectivesConfig,
    new_sweep_id,
    rounded_sizes,
    sizes_reversed,
)
from gpuscale.bench.launch_events import exit_cause
from gpuscale.bench.results import ResultsError
from gpuscale.bench.results_file import COLLECTIVES_FILE, append_records, check_writable
from gpuscale.bench.runner import check_devices, cuda_devices, device_kind, torchrun_command
from gpuscale.bench.telemetry import topology_here, visible_uuids
from gpuscale.hardware.links import get_preset
from gpuscale.interconnect.expected import first_gpus, sweep_gpus
from gpuscale.interconnect.nccl import check_env, parse_debug_log
from gpuscale.interconnect.records import Sweeps, read_sweeps
from gpuscale.interconnect.shown import sweep_said, sweep_spread, sweep_views, verdict_view
from gpuscale.interconnect.verdict import judge
from gpuscale.quantities import counted, format_bytes
from gpuscale.sources.bounded import skipped_lines
from gpuscale.sources.processes import RUNNER_PID, available_memory, lifeline
from gpuscale.sources.signals import note_on_stop
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.refusals import as_options

if TYPE_CHECKING:
    import pandas as pd

    from gpuscale.interconnect.topology import Topology
    from gpuscale.tables.views import TableView


class SweepError(Exception):
    """A sweep that could not run or left no measurement (the message says why)."""


@dataclass(frozen=True, slots=True)
class SweepRun:
    """A finished sweep: its id, every sweep of the file (for the verdict), this one's
    rows, the device kind (``cuda``/``cpu``) and the environment it ran with."""

    sweep_id: str
    sweeps: Sweeps
    latest: pd.DataFrame
    device: str
    env: dict[str, str]


def _check_world(world: int, backend: str, oversubscribe: bool) -> str:
    """The device kind the sweep runs on, after what ``bench`` refuses too
    (:func:`~gpuscale.bench.runner.check_devices`) and a collective on one rank."""
    device = device_kind(backend)
    if world < 2:
        shown = "1 process"
        if device == "cuda":
            shown = f"{counted(cuda_devices(), 'CUDA device')} visible"
        raise SweepError(
            f"a collective needs two or more devices ({shown}, --nproc {world}): nothing "
            "measured, no sweep written. Run it where 2 or more GPUs are visible, or time "
            "CPU processes with --backend gloo --nproc 2; `gpuscale advise` without "
            "--collectives takes the link from --interconnect (a preset) instead"
        )
    try:
        return check_devices(
            backend,
            world,
            oversubscribe=oversubscribe,
            measured="the interconnect",
            holds="its own message buffers",
        )
    except ValueError as exc:
        raise SweepError(str(exc)) from None


def _check_memory(config: CollectivesConfig, world: int, device: str) -> None:
    """CPU ranks whose buffers at the largest message would not fit in the memory this
    host has free are refused before they start (the kernel would kill one mid-sweep)."""
    need = config.host_bytes(world, device)
    if device != "cpu" or (free := available_memory()) is None or need <= free:
        return
    per = need // config.largest(device)  # buffers of the largest message, all ranks
    fits = free // per
    largest = fits >> 20 << 20 or fits  # whole MiB, where it is that large
    raise SweepError(
        f"--max-bytes {format_bytes(config.largest(device))} needs at least "
        f"{format_bytes(need)} of host memory ({world} processes x "
        f"{per // world} buffers of it) and this host has {format_bytes(free)} available: "
        f"give --max-bytes at most {format_bytes(largest)}, or fewer --nproc"
    )


def _failure(done: subprocess.CompletedProcess[str]) -> str:
    """Why a torchrun launch failed, in one line: a rank killed by a signal as such
    (torchrun's own block says only ``error_file: <N/A>``), else its last lines."""
    text = (done.stderr or "") + (done.stdout or "")
    ended = exit_cause(text)
    if ended is not None:
        return ended[1]
    tail = [x for x in (done.stderr or done.stdout).strip().splitlines() if x.strip()][-3:]
    return " | ".join(tail)


def run_collectives(
    config: CollectivesConfig, out_file: Path, world: int, *, oversubscribe: bool = False
) -> SweepRun:
    """Run ``config`` on ``world`` local processes under torchrun, appending to
    ``out_file`` (JSONL). Raises :class:`SweepError` before starting when the devices,
    the host's memory or the file cannot take the sweep, and after when the run failed
    (a file this run created is then not left behind empty)."""
    device = _check_world(world, config.backend, oversubscribe)  # before the file is touched
    _check_memory(config, world, device)
    if config.min_bytes > (largest := config.largest(device)):  # the device's default
        raise SweepError(as_options(sizes_reversed(config.min_bytes, largest, given=False)))
    created = not out_file.exists()
    try:  # before torchrun starts: its own failure would only say "error_file: <N/A>"
        check_writable(out_file, holds=COLLECTIVES_FILE)
    except ResultsError as exc:
        raise SweepError(str(exc)) from None
    sweep_id = new_sweep_id()
    note_on_stop(lambda: kept_note(out_file, sweep_id))  # Ctrl-C: what the file holds of it
    try:
        return _run(config, out_file, world, device, sweep_id)
    finally:
        if created and out_file.is_file() and out_file.stat().st_size == 0:
            out_file.unlink()


def kept_note(out_file: Path, sweep_id: str) -> str:
    """What follows "interrupted" when a sweep is stopped: what ``out_file`` holds of the
    sweep ``sweep_id``, each collective's sizes, or that none of it was written (its ranks
    write the whole sweep once its last size is measured) and whether the file is there."""
    where = quoted_path(out_file)
    try:
        rows = read_sweeps(out_file).of(sweep_id) if out_file.is_file() else None
    except (OSError, ValueError):
        return ""
    if rows is None or rows.empty:
        why = "(a sweep's rows are written once its last size is measured)"
        said = f"{why}, {where} not created" if rows is None else f"to {where} {why}"
        return f": nothing of this sweep written {said}; run the same command again to measure it"
    sizes = rows.groupby("op", sort=False)["size_bytes"].nunique()
    said = ", ".join(f"{op} at {counted(int(n), 'size')}" for op, n in sizes.items())
    return f": sweep {sweep_id} kept in {where} ({said})"


def _run(
    config: CollectivesConfig, out_file: Path, world: int, device: str, sweep_id: str
) -> SweepRun:
    """The launch itself, its NCCL log appended, and the sweep read back."""
    command = [
        *torchrun_command(world, "gpuscale.bench.collectives"),
        *("--out", str(out_file), *config.worker_args(device, sweep_id)),
    ]
    env = {**os.environ}
    if device == "cuda" and "NCCL_DEBUG" not in env:
        env["NCCL_DEBUG"] = "INFO"  # what NCCL chose goes into the sweep's record
    # torchrun dies with this process (SIGKILL included), and its ranks watch this process
    # too: one still starting when torchrun died (before it could arm its own signal) ends
    env[RUNNER_PID] = str(os.getpid())
    done = subprocess.run(command, capture_output=True, text=True, env=env, preexec_fn=lifeline())
    if done.returncode != 0:
        raise SweepError("the collectives run failed: " + _failure(done))
    nccl = parse_debug_log(done.stdout + done.stderr)
    if nccl.version or nccl.transports:
        record = {"schema": SCHEMA, "kind": "nccl", "sweep_id": sweep_id, "nccl": nccl.to_dict()}
        append_records(out_file, [record])
    sweeps = read_sweeps(out_file)
    latest = sweeps.of(sweep_id)
    if latest.empty:
        raise SweepError(f"no measurement of sweep {sweep_id} in {quoted_path(out_file)}")
    return SweepRun(sweep_id, sweeps, latest, device, env)


@dataclass(frozen=True)
class InterconnectCheck:
    """A collectives sweep and what it says of the interconnect: ``settings`` (NCCL
    environment findings) and ``verdicts`` (one sentence per collective), in words;
    ``skipped``: the file's lines not read, a warning each (``read_sweeps``' problems);
    ``closing``: where the sweep was appended, as ``bench`` says it; ``said``: the lines
    under the verdict (``interconnect.shown.sweep_said``); ``warned``: a collective whose
    calls were far apart, a warning each (``sweep_spread``); ``views``: a table per
    collective that ran, as nccl-tests prints it; ``verdict_view``: the verdict records as
    ``-f csv`` and ``-f json`` write them (``interconnect.shown.verdict_view``)."""

    run: SweepRun
    settings: list[str]
    verdicts: list[str]
    verdict_view: TableView
    skipped: list[str] = field(default_factory=list)
    closing: str = ""
    said: list[str] = field(default_factory=list)
    warned: list[str] = field(default_factory=list)
    views: list[TableView] = field(default_factory=list)


def check_interconnect(
    asked: CheckRequest, config: CollectivesConfig, world: int
) -> InterconnectCheck:
    """Run a collectives sweep on ``world`` processes (rows appended to ``asked.out``) and
    judge it: against ``asked.interconnect`` (a link preset), else the topology of
    ``asked.topo_file`` (a saved ``nvidia-smi topo -m``, read before the sweep), else
    NVML's on GPUs. Raises ValueError (an unknown preset, an unreadable topology file) and
    :class:`SweepError`."""
    topo_file, gpu, preset = asked.topo_file, asked.gpu, asked.interconnect
    if preset:  # the preset's own name, whatever the case typed; unknown: the closest
        try:
            preset = get_preset(preset).name
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None
    topology = topology_here(topo_file, gpu) if topo_file else None  # a bad file: before
    done = run_collectives(config, asked.out, world, oversubscribe=asked.oversubscribe)
    gpus = None  # a saved matrix's: as the sweep's header names them (CUDA_VISIBLE_DEVICES)
    if not topo_file and done.device == "cuda":
        topology = topology_here(None, gpu)  # NVML's, of the GPUs visible here
        gpus = ranks_gpus(topology, visible_uuids(), world)
    nvlink = False  # the ring of the GPUs the ranks ran on runs over NVLink
    if topology is not None:
        header = done.sweeps.headers.get(done.sweep_id, {})
        ring = topology.ring_of(sweep_gpus(header, topology, world) if gpus is None else gpus)
        nvlink = ring.link == "NV"
    verdicts = judge(
        done.sweeps,
        topology=topology,
        preset=preset,
        env=done.env,
        gpus=gpus,
        sweep_id=done.sweep_id,
    )
    rows = counted(len(done.latest), "result row")
    ranks = int(done.sweeps.headers.get(done.sweep_id, {}).get("ranks") or world)
    settings = [f.message for f in check_env(done.env, nvlink=nvlink)]
    return InterconnectCheck(
        run=done,
        settings=settings,
        # how the sizes asked were sent, once, beside the verdicts that name them
        verdicts=[*(v.sentence() for v in verdicts), *rounded_sizes(config, done.device, ranks)],
        skipped=skipped_lines(done.sweeps.problems),
        closing=f"sweep {done.sweep_id}: {rows} appended to {quoted_path(asked.out)}",
        said=sweep_said(settings, done.latest),
        warned=[f"warning: {line}" for line in sweep_spread(done.latest)],
        views=sweep_views(done.latest),
        verdict_view=verdict_view(verdicts, done.sweep_id, settings, done.latest),
    )


def ranks_gpus(topology: Topology | None, uuids: list[str] | None, world: int) -> tuple[int, ...]:
    """The indices of the GPUs of NVML's ``topology`` (the visible GPUs, in NVML's order)
    local ranks 0..world-1 take: the first ``world`` of ``uuids`` (torch's order, that of
    ``CUDA_VISIBLE_DEVICES``), else the first ``world`` of the topology's
    (``expected.first_gpus``)."""
    first = first_gpus(topology, world)
    if topology is None or uuids is None or world >= len(topology.gpus):
        return first
    at = {g.uuid: i for i, g in enumerate(topology.gpus) if g.uuid}
    gpus = tuple(at[u] for u in uuids[:world] if u in at)
    return gpus if len(gpus) == world else first
