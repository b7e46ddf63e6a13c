"""The topology of the GPUs this job sees, from NVML (nvidia-ml-py), as ``topo -m`` means it.

Only the visible GPUs (given by UUID, as torch reports them: ``bench.telemetry.visible_uuids``;
else every GPU) are listed.
NVLink: each enabled link's remote end is asked for its type, so links into an NVSwitch
(DGX/HGX systems, where ``nvmlDeviceGetNvLinkRemotePciInfo`` names the switch, not a GPU)
are counted as the GPU's switch bundle: two GPUs that both reach the switches meet over
``NV<min of their bundles>``. Otherwise the pair's common PCIe ancestor gives PIX, PXB,
PHB, NODE or SYS. Also: each GPU's current and maximum PCIe generation and width, CPU and
NUMA affinity, the P2P read capability of every pair, the NVLink generation (from the
architecture), and the InfiniBand NICs and their rates where Linux exposes them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import TypeVar

from gpuscale.hardware.links import NVML_ARCH_NVLINK, nvlink_for_gpu
from gpuscale.interconnect.topology import Gpu, Nic, Topology, read_topo_file
from gpuscale.names import resolve_gpu
from gpuscale.tables.requests import FieldError

T = TypeVar("T")
# NVML's device handles are opaque: only NVML reads them.
Handle = object

_LEVELS = {0: "X", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}


class TopologyError(RuntimeError):
    """NVML is missing or refused a query; the message says which."""


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _cpus(masks: list[int]) -> str:
    """CPU list text (``0-15,32-47``) from NVML's affinity bit masks."""
    cpus = [w * 64 + b for w, mask in enumerate(masks) for b in range(64) if mask >> b & 1]
    spans: list[str] = []
    for cpu in cpus:
        if spans and "-" not in spans[-1].split(",")[-1] and int(spans[-1]) == cpu - 1:
            spans[-1] = f"{spans[-1]}-{cpu}"
        elif spans and "-" in spans[-1] and int(spans[-1].split("-")[1]) == cpu - 1:
            spans[-1] = f"{spans[-1].split('-')[0]}-{cpu}"
        else:
            spans.append(str(cpu))
    return ",".join(spans)


def _optional(fn: Callable[..., T], *args: object) -> T | None:
    try:
        return fn(*args)
    except Exception:  # NVML raises NotSupported and friends on older parts
        return None


def _nvlinks(nvml: ModuleType, handle: Handle) -> tuple[dict[str, int], int]:
    """(links to each peer GPU by PCI bus id, links into NVSwitches)."""
    peers: dict[str, int] = {}
    switch = 0
    for link in range(getattr(nvml, "NVML_NVLINK_MAX_LINKS", 18)):
        try:
            if not nvml.nvmlDeviceGetNvLinkState(handle, link):
                continue
        except nvml.NVMLError:
            continue
        kind = _optional(nvml.nvmlDeviceGetNvLinkRemoteDeviceType, handle, link)
        if kind == getattr(nvml, "NVML_NVLINK_DEVICE_TYPE_SWITCH", 2):
            switch += 1
            continue
        remote = _optional(nvml.nvmlDeviceGetNvLinkRemotePciInfo, handle, link)
        if remote is not None:
            bus = _text(remote.busId).lower()
            peers[bus] = peers.get(bus, 0) + 1
    return peers, switch


def _gpu(nvml: ModuleType, index: int, handle: Handle) -> Gpu:
    masks = _optional(nvml.nvmlDeviceGetCpuAffinity, handle, 64)
    return Gpu(
        name=f"GPU{index}",
        model=_text(_optional(nvml.nvmlDeviceGetName, handle) or ""),
        uuid=_text(_optional(nvml.nvmlDeviceGetUUID, handle) or ""),
        bus_id=_text(nvml.nvmlDeviceGetPciInfo(handle).busId).lower(),
        pcie_gen=_optional(nvml.nvmlDeviceGetCurrPcieLinkGeneration, handle),
        pcie_width=_optional(nvml.nvmlDeviceGetCurrPcieLinkWidth, handle),
        pcie_max_gen=_optional(nvml.nvmlDeviceGetMaxPcieLinkGeneration, handle),
        pcie_max_width=_optional(nvml.nvmlDeviceGetMaxPcieLinkWidth, handle),
        cpu_affinity=_cpus(list(masks or ())),
        numa_node=str(_optional(nvml.nvmlDeviceGetNumaNodeId, handle) or ""),
    )


def infiniband_nics(root: Path = Path("/sys/class/infiniband")) -> list[Nic]:
    """InfiniBand (and RoCE) devices with their port rate and NUMA node, from sysfs."""
    nics = []
    for k, device in enumerate(sorted(root.glob("*"))):  # none where there is no such folder
        rate_text = ""
        for port in sorted((device / "ports").glob("*")):
            rate_text = _read(port / "rate")
            if rate_text:
                break
        match = re.match(r"([\d.]+)\s*Gb", rate_text)
        nics.append(
            Nic(
                name=f"NIC{k}",
                device=device.name,
                rate_gbit=float(match.group(1)) if match else None,
                numa_node=_read(device / "device" / "numa_node"),
            )
        )
    return nics


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def nvml_starts() -> bool:
    """Whether NVML starts here (nvidia-ml-py installed, an NVIDIA driver loaded): a check
    of a few milliseconds, made before anything costlier (importing torch) is done for a
    topology NVML could not read anyway."""
    try:
        import pynvml  # optional: nvidia-ml-py (the bench extra)

        pynvml.nvmlInit()
    except Exception:  # not installed, no driver, no GPU: NVML's errors are of many kinds
        return False
    _optional(pynvml.nvmlShutdown)
    return True


def nvml_topology(
    nvml: ModuleType | None = None, visible_uuids: list[str] | None = None
) -> Topology:
    """The topology of the visible GPUs (all when ``visible_uuids`` is None).
    ``nvml`` is the pynvml module (or an object with its functions: the tests' fake).
    Raises :class:`TopologyError`."""
    if nvml is None:
        try:
            import pynvml as nvml  # optional: nvidia-ml-py (the bench extra)
        except ImportError:
            raise TopologyError(
                "nvidia-ml-py is not installed (pip install 'gpuscale[bench]')"
            ) from None
    try:
        nvml.nvmlInit()
    except Exception as exc:
        raise TopologyError(f"NVML did not start: {exc} (no NVIDIA driver or GPU?)") from None
    try:
        handles = [nvml.nvmlDeviceGetHandleByIndex(i) for i in range(nvml.nvmlDeviceGetCount())]
        gpus_all = [_gpu(nvml, i, h) for i, h in enumerate(handles)]
        keep = [
            i for i, g in enumerate(gpus_all) if visible_uuids is None or g.uuid in visible_uuids
        ]
        handles = [handles[i] for i in keep]
        gpus = [replace(gpus_all[i], name=f"GPU{k}") for k, i in enumerate(keep)]
        return _build(nvml, handles, gpus)
    except nvml.NVMLError as exc:
        raise TopologyError(f"an NVML query failed: {exc}") from None
    finally:
        _optional(nvml.nvmlShutdown)


def _build(nvml: ModuleType, handles: list[Handle], gpus: list[Gpu]) -> Topology:
    nvlinks = [_nvlinks(nvml, h) for h in handles]
    links: dict[tuple[int, int], str] = {}
    p2p: dict[tuple[int, int], str] = {}
    read = getattr(nvml, "NVML_P2P_CAPS_INDEX_READ", 0)
    for i, hi in enumerate(handles):
        peers_i, switch_i = nvlinks[i]
        for j, hj in enumerate(handles):
            if i == j:
                continue
            direct = peers_i.get(gpus[j].bus_id, 0)
            switch_j = nvlinks[j][1]
            if switch_i and switch_j:
                links[(i, j)] = f"NV{min(switch_i, switch_j)}"
            elif direct:
                links[(i, j)] = f"NV{direct}"
            else:
                level = nvml.nvmlDeviceGetTopologyCommonAncestor(hi, hj)
                links[(i, j)] = _LEVELS.get(int(level), "SYS")
            status = _optional(nvml.nvmlDeviceGetP2PStatus, hi, hj, read)
            if status is not None:
                p2p[(i, j)] = "OK" if status == 0 else f"not supported (NVML status {status})"
    # the first GPU's (none: no GPU visible)
    arch = next((_optional(nvml.nvmlDeviceGetArchitecture, h) for h in handles), None)
    generation = NVML_ARCH_NVLINK.get(arch) or nvlink_for_gpu(next((g.model for g in gpus), ""))
    if generation == "nvlink3" and gpus and nvlink_for_gpu(gpus[0].model) == "nvlink3-bridge":
        generation = "nvlink3-bridge"  # GA102 is Ampere too, with bridge links
    return Topology(
        gpus=gpus,
        links=links,
        nics=infiniband_nics(),
        nvswitch=any(switch for _, switch in nvlinks),
        nvlink_generation=generation,
        p2p=p2p,
        source="NVML",
    )


def check_gpu_option(topo_file: Path | None, gpu: str | None) -> None:
    """``--gpu`` names the GPUs of a saved topology: without ``--topo-file`` (NVML reads
    the GPUs here, and a CPU sweep has none) it would be ignored, so it is refused."""
    if gpu is not None and topo_file is None:
        raise FieldError(
            "gpu",
            gpu,
            "names the GPU of a saved `nvidia-smi topo -m`: give it with --topo-file "
            "(without one the GPUs are read here, from NVML)",
        )


def detect_topology(
    topo_file: Path | None, gpu: str | None, visible_uuids: list[str] | None = None
) -> Topology | None:
    """The topology from a saved ``nvidia-smi topo -m`` (``gpu`` names the model), else
    NVML's for the GPUs in ``visible_uuids`` (all when None), else None (no NVML here).

    Raises ValueError naming ``topo_file`` when it cannot be read or parsed, and ``gpu``'s
    :class:`~gpuscale.tables.requests.FieldError` when the catalogue knows no such GPU."""
    check_gpu_option(topo_file, gpu)
    gpu = resolve_gpu(gpu)
    if topo_file is not None:
        return read_topo_file(topo_file, gpu)
    try:
        return nvml_topology(visible_uuids=visible_uuids)
    except TopologyError:
        return None
