"""What a bench worker records about its machine: versions and settings, the GPU's power
and energy through NVML, and how busy the host was with other work.

NVML is opened on the GPU this process actually uses, found by its UUID (or PCI bus id)
from torch: NVML numbers devices by PCI order and ignores ``CUDA_VISIBLE_DEVICES``, so
under Slurm or Kubernetes "device 0" of torch is often not NVML's device 0. Energy comes
from the board's energy counter (``nvmlDeviceGetTotalEnergyConsumption``, mJ, Volta and
newer) read at the start and end of the timed phase; where the counter is missing, power
is sampled every 50 ms instead (``nvmlDeviceGetPowerUsage`` is itself a ~1 s average on
recent GPUs, so samples are a coarse fallback). A sampled reading can drop out: NVML
answers 0 W for a moment, or an error, or no reading comes for a while (the sampler
descheduled). Those are counted where the energy is made (:func:`sampled_power`): the
dropouts and the seconds of the phase no reading covered, recorded beside the energy,
which the bench table then flags (``plausibility.energy_meter_flag``).

On a CPU device the host's package energy comes from Linux RAPL
(``/sys/class/powercap/intel-rapl:N/energy_uj``, the ``package-N`` domains; AMD Zen
exposes the same files), read by the first rank of each host: the counters cover the
whole package, so that rank reports the host's energy and, as the device's power, the
package power shared among the host's ranks. Where the files are unreadable (most
virtual machines, or root-only since the PLATYPUS fix) nothing is claimed.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from contextlib import suppress
from dataclasses import asdict, dataclass
from itertools import pairwise
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, TypeAlias

from gpuscale.bench.background import Background
from gpuscale.bench.cores import allowed_cpus, host_cores, usable_cores
from gpuscale.interconnect.nvml import (
    TopologyError,
    detect_topology,
    nvml_starts,
    nvml_topology,
)
from gpuscale.interconnect.topology import Topology
from gpuscale.plausibility import MIN_POWER_W

if TYPE_CHECKING:
    import torch

# A device handle as NVML hands it back (an opaque pointer, passed back to NVML alone).
NvmlHandle: TypeAlias = object


# The Slurm job a run was part of, where it ran under one: its id, step and nodes
SLURM_JOB_KEYS = ("SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_JOB_NODELIST")


def machine_environment(device: torch.device) -> dict[str, object]:
    """Versions, host, threads, NCCL settings, the Slurm job (``SLURM_JOB_KEYS``, where
    one ran it) and (on GPUs) the device and its links."""
    # lazy: torch, the CLI imports this module without it (visible_uuids)
    import torch

    env: dict[str, object] = {
        "hostname": socket.gethostname(),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "cuda": torch.version.cuda,
        "threads": torch.get_num_threads(),
        "cpu_count": usable_cores(),  # the host's, less those the affinity leaves out
        "cpu_total": host_cores(),  # the host's all: what cpu_count is of
        "nccl_env": {k: v for k, v in os.environ.items() if k.startswith("NCCL_")},
        "device_name": "cpu",
    }
    if job := {
        key.removeprefix("SLURM_").lower(): os.environ[key]
        for key in SLURM_JOB_KEYS
        if key in os.environ
    }:
        env["slurm"] = job  # which job and nodes ran it: rank 0's hostname names one node
    if device.type == "cuda":
        env["nccl"] = ".".join(map(str, torch.cuda.nccl.version()))
        env["device_name"] = torch.cuda.get_device_name(device)
        env["device_memory_bytes"] = int(torch.cuda.get_device_properties(device).total_memory)
        env["tf32_matmul"] = torch.backends.cuda.matmul.allow_tf32
        env["tf32_cudnn"] = torch.backends.cudnn.allow_tf32
        try:
            env["topology"] = nvml_topology(visible_uuids=visible_uuids()).to_dict()
        except TopologyError as exc:
            env["topology"] = {"error": str(exc)}
    return env


def mean_of(values: list[float | None]) -> float | None:
    """The mean of ``values`` that are given (None left out); None where none is."""
    kept = [v for v in values if v is not None]
    return sum(kept) / len(kept) if kept else None


def device_identity(device: torch.device) -> tuple[str | None, str | None]:
    """(UUID, PCI bus id) of the CUDA device torch uses, as NVML names them."""
    # lazy: torch, the CLI imports this module without it (visible_uuids)
    import torch

    props = torch.cuda.get_device_properties(device)
    uuid = getattr(props, "uuid", None)
    uuid_text = None if uuid is None else str(uuid)
    if uuid_text and not uuid_text.startswith(("GPU-", "MIG-")):
        uuid_text = f"GPU-{uuid_text}"
    bus = None
    if getattr(props, "pci_bus_id", None) is not None:
        bus = (
            f"{getattr(props, 'pci_domain_id', 0):08x}:{props.pci_bus_id:02x}:"
            f"{getattr(props, 'pci_device_id', 0):02x}.0"
        )
    return uuid_text, bus


def visible_uuids() -> list[str] | None:
    """The UUIDs of the GPUs this process may use, from torch (which honours
    ``CUDA_VISIBLE_DEVICES``), or None without torch or GPUs (then every GPU is shown)."""
    try:
        # lazy and optional: torch, absent from a base install that asks NVML for the topology
        import torch

        if not torch.cuda.is_available():
            return None
        found = [device_identity(i)[0] for i in range(torch.cuda.device_count())]
        return [u for u in found if u] or None
    except Exception:  # torch without CUDA, an old torch: show every GPU
        return None


def topology_here(topo_file: Path | None, gpu: str | None) -> Topology | None:
    """The topology from a saved ``nvidia-smi topo -m`` (``gpu`` names the model), else
    NVML's for the GPUs torch sees here, else None (no NVML). ValueError naming
    ``topo_file`` when it cannot be read or parsed."""
    # torch (seconds to import) names the visible GPUs only where NVML can read them
    looked = topo_file is None and nvml_starts()
    return detect_topology(topo_file, gpu, visible_uuids() if looked else None)


def topology_required(topo_file: Path | None, gpu: str | None) -> Topology:
    """:func:`topology_here`, or a ValueError saying what to give where NVML is not there
    to read one."""
    topology = topology_here(topo_file, gpu)
    if topology is None:
        raise ValueError(
            "no NVML here (no NVIDIA driver or GPU, or nvidia-ml-py missing); pass --file "
            "with a saved `nvidia-smi topo -m`"
        )
    return topology


def nvml_handle(nvml: ModuleType, uuid: str | None, bus_id: str | None) -> NvmlHandle:
    """The NVML handle of the device with this UUID, else this PCI bus id."""
    if uuid:
        try:
            return nvml.nvmlDeviceGetHandleByUUID(uuid)
        except nvml.NVMLError:
            pass
    if bus_id:
        return nvml.nvmlDeviceGetHandleByPciBusId(bus_id)
    raise LookupError("no UUID or PCI bus id to find the device in NVML")


# NVML's power is sampled every SAMPLE_PERIOD_S where the board has no energy counter.
SAMPLE_PERIOD_S = 0.05
# A stretch of the phase this long without a usable reading (ten sampling periods) is
# uncovered: the sampler missed it, and the mean of the other readings stands in for it.
# (NVML's power is a ~1 s average on recent GPUs, an instant's reading on older ones: a
# stretch longer than a few periods is not known to be covered.)
MAX_GAP_S = 10 * SAMPLE_PERIOD_S


@dataclass(frozen=True, slots=True)
class SampledPower:
    """A phase's sampled power (:func:`sampled_power`), its fields named as the meter's
    summary records them: mean power (W) and energy (J), None where no reading is usable;
    the dropouts counted and the seconds of the phase no usable reading covered."""

    power_w_mean: float | None
    energy_j: float | None
    power_dropouts: int
    power_uncovered_s: float


def sampled_power(
    readings: list[tuple[float, float | None]], start: float, end: float
) -> SampledPower:
    """Mean power (W) and energy (J) of a phase from ``readings`` (time from
    ``time.perf_counter``, watts; None: the read failed) between ``start`` and ``end``,
    with its dropouts. A reading under ``plausibility.MIN_POWER_W`` (7 W: a tenth of the
    lowest board power catalogued, ~0 W to a working GPU) or a failed read is a dropout,
    left out of the mean; each stretch between usable readings (the phase's ends
    included) longer than ``MAX_GAP_S`` is one more dropout and its seconds uncovered.
    ``energy_j = mean x seconds``: the uncovered seconds at the mean of the others, an
    estimate the dropouts flag. Mean and energy None where no reading is usable."""
    usable = [t for t, w in readings if w is not None and w >= MIN_POWER_W]
    watts = [w for _, w in readings if w is not None and w >= MIN_POWER_W]
    dropouts = len(readings) - len(usable)
    edges = [start, *usable, end]
    stretches = [b - a for a, b in pairwise(edges) if b - a > MAX_GAP_S]
    seconds = max(end - start, 1e-9)
    mean = sum(watts) / len(watts) if watts else None
    return SampledPower(
        power_w_mean=mean,
        energy_j=None if mean is None else mean * seconds,
        power_dropouts=dropouts + len(stretches),
        power_uncovered_s=min(sum(stretches), seconds),
    )


class GpuMeter(Background):
    """Energy (counter) or sampled power, and utilisation, of one GPU over a phase."""

    def __init__(self, nvml: ModuleType, handle: NvmlHandle) -> None:
        super().__init__()
        self.nvml, self.handle = nvml, handle
        self._util: list[float] = []
        self._power: list[tuple[float, float | None]] = []  # (time, W; None: read failed)
        self._energy_start: float | None = None
        self._energy_end: float | None = None
        self._start = self._end = 0.0

    def _energy_mj(self) -> float | None:
        try:
            return float(self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle))
        except self.nvml.NVMLError:
            return None

    def __enter__(self) -> GpuMeter:
        self._energy_start = self._energy_mj()
        self._start = time.perf_counter()
        return super().__enter__()

    def __exit__(self, *exc: object) -> None:
        super().__exit__(*exc)
        self._end = time.perf_counter()
        self._energy_end = self._energy_mj()

    def run(self) -> None:
        while not self.stopping.is_set():
            with suppress(self.nvml.NVMLError):  # utilisation: the mean of those read
                self._util.append(self.nvml.nvmlDeviceGetUtilizationRates(self.handle).gpu)
            if self._energy_start is None:
                try:
                    watts = self.nvml.nvmlDeviceGetPowerUsage(self.handle) / 1000.0
                except self.nvml.NVMLError:
                    watts = None  # a dropout, counted by sampled_power
                self._power.append((time.perf_counter(), watts))
            self.stopping.wait(SAMPLE_PERIOD_S)

    def summary(self) -> dict[str, object]:
        """Mean utilisation (%), mean power (W), energy (J) of the phase and its source;
        sampled, its dropouts and seconds uncovered (:func:`sampled_power`; a counter's
        none: it counts every joule)."""
        seconds = max(self._end - self._start, 1e-9)
        util = mean_of(self._util)
        if self._energy_start is not None and self._energy_end is not None:
            joules = (self._energy_end - self._energy_start) / 1000.0
            return {
                "gpu_util_pct_mean": util,
                "power_w_mean": joules / seconds,
                "energy_j": joules,
                "power_source": "energy counter",
                "power_dropouts": 0,
                "power_uncovered_s": 0.0,
            }
        if not self._power:  # the counter's last read failed: the whole phase uncovered
            none = {"power_w_mean": None, "energy_j": None, "power_source": "energy counter"}
            uncovered = {"power_dropouts": 1, "power_uncovered_s": seconds}
            return {"gpu_util_pct_mean": util, **none, **uncovered}
        sampled = asdict(sampled_power(self._power, self._start, self._end))
        return {"gpu_util_pct_mean": util, **sampled, "power_source": "sampled power"}


def open_gpu_meter(device: torch.device) -> GpuMeter | None:
    """A meter for the GPU this process uses, or None without NVML."""
    try:
        import pynvml  # optional: nvidia-ml-py (the bench extra); without it no power

        pynvml.nvmlInit()
        uuid, bus = device_identity(device)
        return GpuMeter(pynvml, nvml_handle(pynvml, uuid, bus))
    except Exception:  # no driver, no pynvml, no match: power is optional
        return None


class CpuMeter:
    """Package energy of this host over a phase, from RAPL counters (see the module
    docstring); the same ``summary`` as ``GpuMeter``."""

    def __init__(self, domains: list[tuple[Path, float]], ranks_on_host: int) -> None:
        self.domains = domains  # (energy_uj file, wrap-around range in uJ)
        self.ranks_on_host = max(1, ranks_on_host)
        self._start: list[float] = []
        self._end: list[float] = []
        self._t0 = self._t1 = 0.0

    def _read(self) -> list[float]:
        return [float(path.read_text()) for path, _ in self.domains]

    def __enter__(self) -> CpuMeter:
        self._start, self._t0 = self._read(), time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self._end, self._t1 = self._read(), time.perf_counter()

    def summary(self) -> dict[str, object]:
        seconds = max(self._t1 - self._t0, 1e-9)
        joules = 0.0
        for (_, wrap), start, end in zip(self.domains, self._start, self._end, strict=True):
            joules += ((end - start) % wrap if wrap > 0 else end - start) / 1e6
        return {
            "gpu_util_pct_mean": None,
            "power_w_mean": joules / seconds / self.ranks_on_host,  # one rank's share
            "ranks_on_host": self.ranks_on_host,
            "energy_j": joules,
            "power_source": "RAPL package energy",
        }


def open_cpu_meter(ranks_on_host: int, root: Path = Path("/sys/class/powercap")) -> CpuMeter | None:
    """A RAPL meter over the host's package domains, or None where none is readable."""
    domains = []
    for folder in sorted(root.glob("intel-rapl:*")):
        if folder.name.count(":") != 1:
            continue  # sub-domains (core, uncore, dram) are inside the package's count
        try:
            if not (folder / "name").read_text().startswith("package"):
                continue
            (folder / "energy_uj").read_text()
            wrap_file = folder / "max_energy_range_uj"
            wrap = float(wrap_file.read_text()) if wrap_file.exists() else 0.0
        except (OSError, ValueError):
            continue
        domains.append((folder / "energy_uj", wrap))
    return CpuMeter(domains, ranks_on_host) if domains else None


@dataclass(frozen=True, slots=True)
class HostSample:
    """CPU time of the host (of the CPUs this process may run on, where its affinity allows
    fewer than the host has) and of this process at one moment (seconds); beside them, to
    the nanosecond, the wall clock (``wall_s``), this process's CPU time (``cpu_s``, every
    thread's, ``time.process_time``), and of the calling thread, the one that runs the
    steps, its CPU time (``thread_cpu_s``) and the time it has waited on a run queue for a
    core (``queued_s``, :func:`queued_s`; None where the kernel keeps no schedstat)."""

    busy_s: float
    total_s: float
    steal_s: float
    own_s: float
    wall_s: float | None = None
    cpu_s: float | None = None
    thread_cpu_s: float | None = None
    queued_s: float | None = None

    @staticmethod
    def now(
        stat: Path = Path("/proc/stat"), cpus: frozenset[int] | None = None
    ) -> HostSample | None:
        """From ``/proc/stat`` and ``os.times``: the CPUs of ``cpus`` (default: those the
        affinity allows, where fewer than the host's: other jobs on a shared Slurm node use
        the others, not the ranks' cores), else the whole host; None where there is no
        /proc."""
        cpus = allowed_cpus() if cpus is None else cpus
        try:
            lines = stat.read_text(encoding="ascii").splitlines()
        except OSError:
            return None
        rows = [line.split() for line in lines if line.startswith("cpu")]
        mine = [r for r in rows if cpus and r[0][3:].isdigit() and int(r[0][3:]) in cpus]
        ticks = [0.0] * 8  # user .. steal; iowait and steal, where a kernel writes none, 0
        for fields in mine or rows[:1]:  # the allowed CPUs' lines, else the host's total
            for at, value in enumerate(fields[1:9]):
                ticks[at] += float(value)
        hz = os.sysconf("SC_CLK_TCK")
        idle = ticks[3] + ticks[4]  # idle + iowait
        steal = ticks[7]
        times = os.times()
        return HostSample(
            busy_s=(sum(ticks[:8]) - idle) / hz,
            total_s=sum(ticks[:8]) / hz,
            steal_s=steal / hz,
            own_s=times.user + times.system,
            wall_s=time.perf_counter(),
            cpu_s=time.process_time(),
            thread_cpu_s=time.thread_time(),
            queued_s=queued_s(),
        )


def queued_s(schedstat: Path = Path("/proc/thread-self/schedstat")) -> float | None:
    """Seconds the calling thread has waited runnable on a run queue for a core: its
    ``run_delay``, the second of the three numbers of its schedstat (ns; Linux's
    CONFIG_SCHED_INFO), which the kernel books to the nanosecond when the thread gets its
    core. The calling thread is running as it reads it, so two reads bound its waits
    between them exactly, over a phase of any length (unlike /proc/stat's clock ticks).
    None where the file cannot be read."""
    try:
        return int(schedstat.read_text(encoding="ascii").split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


# HostSample's fields a run queue's numbers are read from, and the names they are kept by.
_RUN_QUEUE = (
    ("queued_s", "queued_ms"),
    ("thread_cpu_s", "cpu_ms"),
    ("cpu_s", "rank_cpu_ms"),
    ("wall_s", "wall_ms"),
)


def run_queue(
    starts: list[HostSample | None], ends: list[HostSample | None]
) -> dict[str, float] | None:
    """Per phase, of the rank whose step thread waited for a core the largest share of the
    time it was ready to run (``queued / (queued + its CPU time)``; a synchronised step
    waits for its slowest rank): the milliseconds it waited (``queued_ms``) and ran
    (``cpu_ms``), its process's CPU time, every thread's (``rank_cpu_ms``), and the
    phase's wall time (``wall_ms``). None where a rank's samples lack them (no schedstat)."""
    worst: tuple[float, dict[str, float]] | None = None
    for start, end in zip(starts, ends, strict=True):
        if start is None or end is None:
            return None
        pairs = [(getattr(start, f), getattr(end, f), name) for f, name in _RUN_QUEUE]
        if any(a is None or b is None for a, b, _ in pairs):
            return None
        ms = {name: 1e3 * max(0.0, b - a) for a, b, name in pairs}
        ready = ms["queued_ms"] + ms["cpu_ms"]
        share = ms["queued_ms"] / ready if ready > 0 else 0.0
        if worst is None or share > worst[0]:
            worst = (share, ms)
    return None if worst is None else worst[1]


def host_busy(
    starts: list[HostSample | None], ends: list[HostSample | None], hosts: list[str]
) -> dict[str, float] | None:
    """Per phase: the share of the host's CPU time used by other work (busy time less
    every rank's own) and stolen by the hypervisor, from each rank's samples; hosts
    counted once each (the first rank on a host reads its /proc/stat for all)."""
    other = total = steal = 0.0
    seen: dict[str, tuple[float, float, float]] = {}
    for start, end, host in zip(starts, ends, hosts, strict=True):
        if start is None or end is None:
            return None
        own = end.own_s - start.own_s
        if host not in seen:
            seen[host] = (end.busy_s - start.busy_s, end.total_s - start.total_s, 0.0)
            steal += end.steal_s - start.steal_s
        busy, tot, used = seen[host]
        seen[host] = (busy, tot, used + own)
    for busy, tot, used in seen.values():
        other += max(0.0, busy - used)
        total += tot
    if total <= 0:
        return None
    return {"other_load_share": other / total, "steal_share": steal / total}
