"""A fake ``pynvml`` built to NVML's documented behaviour, for machines without GPUs.

Devices are listed in PCI order (NVML's order, which ignores ``CUDA_VISIBLE_DEVICES``);
NVLink queries on a link a device does not have raise NVMLError (InvalidArgument past the
device's links, NotSupported on GPUs without NVLink); the remote end of a link into an
NVSwitch is the switch (``NVML_NVLINK_DEVICE_TYPE_SWITCH``, its own PCI id); energy is a
monotonic millijoule counter, absent (NotSupported) on pre-Volta parts; power is in
milliwatts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

NVML_NVLINK_MAX_LINKS = 18
NVML_NVLINK_DEVICE_TYPE_GPU = 0
NVML_NVLINK_DEVICE_TYPE_SWITCH = 2
NVML_P2P_CAPS_INDEX_READ = 0
NVML_P2P_STATUS_OK = 0
NVML_P2P_STATUS_NOT_SUPPORTED = 5


class NVMLError(Exception):
    pass


class NVMLError_NotSupported(NVMLError):
    pass


class NVMLError_InvalidArgument(NVMLError):
    pass


@dataclass
class FakeGpu:
    name: str
    uuid: str
    bus_id: str
    arch: int = 9
    pcie: tuple[int, int, int, int] = (5, 16, 5, 16)  # current gen, width, max gen, width
    numa: int = 0
    cpus: tuple[int, ...] = tuple(range(16))
    switch_links: int = 0
    peers: dict[str, int] = field(default_factory=dict)  # bus id -> direct NVLinks
    energy: bool = True
    joules: float = 0.0


@dataclass
class FakeSystem:
    gpus: list[FakeGpu]
    ancestor: dict[tuple[int, int], int] = field(default_factory=dict)  # NVML levels
    p2p_ok: bool = True


class FakeNvml:
    """The module: ``FakeNvml(system)`` has pynvml's functions over ``system``."""

    NVMLError = NVMLError
    NVML_NVLINK_MAX_LINKS = NVML_NVLINK_MAX_LINKS
    NVML_NVLINK_DEVICE_TYPE_SWITCH = NVML_NVLINK_DEVICE_TYPE_SWITCH
    NVML_P2P_CAPS_INDEX_READ = NVML_P2P_CAPS_INDEX_READ

    def __init__(self, system: FakeSystem) -> None:
        self.system = system
        self.started = False

    def nvmlInit(self) -> None:
        self.started = True

    def nvmlShutdown(self) -> None:
        self.started = False

    def nvmlDeviceGetCount(self) -> int:
        return len(self.system.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> int:
        if not 0 <= index < len(self.system.gpus):
            raise NVMLError_InvalidArgument(index)
        return index

    def nvmlDeviceGetHandleByUUID(self, uuid: str) -> int:
        for i, g in enumerate(self.system.gpus):
            if g.uuid == uuid:
                return i
        raise NVMLError("Not Found")

    def nvmlDeviceGetHandleByPciBusId(self, bus: str) -> int:
        for i, g in enumerate(self.system.gpus):
            if g.bus_id.lower() == bus.lower():
                return i
        raise NVMLError("Not Found")

    def _gpu(self, h: int) -> FakeGpu:
        return self.system.gpus[h]

    def nvmlDeviceGetName(self, h: int) -> str:
        return self._gpu(h).name

    def nvmlDeviceGetUUID(self, h: int) -> str:
        return self._gpu(h).uuid

    def nvmlDeviceGetPciInfo(self, h: int) -> SimpleNamespace:
        return SimpleNamespace(busId=self._gpu(h).bus_id.upper().encode())

    def nvmlDeviceGetArchitecture(self, h: int) -> int:
        return self._gpu(h).arch

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h: int) -> int:
        return self._gpu(h).pcie[0]

    def nvmlDeviceGetCurrPcieLinkWidth(self, h: int) -> int:
        return self._gpu(h).pcie[1]

    def nvmlDeviceGetMaxPcieLinkGeneration(self, h: int) -> int:
        return self._gpu(h).pcie[2]

    def nvmlDeviceGetMaxPcieLinkWidth(self, h: int) -> int:
        return self._gpu(h).pcie[3]

    def nvmlDeviceGetNumaNodeId(self, h: int) -> int:
        return self._gpu(h).numa

    def nvmlDeviceGetCpuAffinity(self, h: int, size: int) -> list[int]:
        masks = [0] * size
        for cpu in self._gpu(h).cpus:
            masks[cpu // 64] |= 1 << (cpu % 64)
        return masks

    def _links(self, h: int) -> list[tuple[int, str]]:
        g = self._gpu(h)
        links = [
            (NVML_NVLINK_DEVICE_TYPE_SWITCH, f"0000:{0xE0 + k:02x}:00.0")
            for k in range(g.switch_links)
        ]
        for bus, count in g.peers.items():
            links += [(NVML_NVLINK_DEVICE_TYPE_GPU, bus)] * count
        return links

    def nvmlDeviceGetNvLinkState(self, h: int, link: int) -> int:
        links = self._links(h)
        if not links:
            raise NVMLError_NotSupported("NVLink not supported")
        if link >= len(links):
            raise NVMLError_InvalidArgument(link)
        return 1

    def nvmlDeviceGetNvLinkRemoteDeviceType(self, h: int, link: int) -> int:
        self.nvmlDeviceGetNvLinkState(h, link)
        return self._links(h)[link][0]

    def nvmlDeviceGetNvLinkRemotePciInfo(self, h: int, link: int) -> SimpleNamespace:
        self.nvmlDeviceGetNvLinkState(h, link)
        return SimpleNamespace(busId=self._links(h)[link][1].upper())

    def nvmlDeviceGetTopologyCommonAncestor(self, a: int, b: int) -> int:
        return self.system.ancestor.get((min(a, b), max(a, b)), 50)

    def nvmlDeviceGetP2PStatus(self, a: int, b: int, index: int) -> int:
        return NVML_P2P_STATUS_OK if self.system.p2p_ok else NVML_P2P_STATUS_NOT_SUPPORTED

    def nvmlDeviceGetTotalEnergyConsumption(self, h: int) -> int:
        g = self._gpu(h)
        if not g.energy:
            raise NVMLError_NotSupported("energy counter")
        g.joules += 350.0  # each read: the device drew 350 J since the last one
        return int(g.joules * 1000)

    def nvmlDeviceGetPowerUsage(self, h: int) -> int:
        return 300_000

    def nvmlDeviceGetUtilizationRates(self, h: int) -> SimpleNamespace:
        return SimpleNamespace(gpu=97, memory=40)


def _bus(k: int) -> str:
    return f"0000:{0x18 + 16 * k:02x}:00.0"


def hgx_h100() -> FakeSystem:
    """8 x H100 SXM, every GPU's 18 NVLinks into the NVSwitches, two sockets."""
    gpus = [
        FakeGpu(
            "NVIDIA H100 80GB HBM3",
            f"GPU-h100-{k}",
            _bus(k),
            arch=9,
            switch_links=18,
            numa=k // 4,
            cpus=tuple(range(56 * (k // 4), 56 * (k // 4) + 56)),
        )
        for k in range(8)
    ]
    ancestor = {(i, j): 40 if i // 4 == j // 4 else 50 for i in range(8) for j in range(i + 1, 8)}
    return FakeSystem(gpus, ancestor)


def a100_x4_nvswitch() -> FakeSystem:
    """4 x A100 SXM behind NVSwitch: NV12 between every pair."""
    gpus = [
        FakeGpu(
            "NVIDIA A100-SXM4-80GB",
            f"GPU-a100-{k}",
            _bus(k),
            arch=7,
            pcie=(4, 16, 4, 16),
            switch_links=12,
        )
        for k in range(4)
    ]
    return FakeSystem(gpus, {(i, j): 40 for i in range(4) for j in range(i + 1, 4)})


def phb_pair(p2p: bool = False, downtrained: bool = False) -> FakeSystem:
    """2 GeForce GPUs behind one PCIe host bridge, P2P not supported (the measured study)."""
    pcie = (3, 8, 4, 16) if downtrained else (4, 16, 4, 16)
    gpus = [
        FakeGpu("NVIDIA GeForce RTX 4090", f"GPU-4090-{k}", _bus(k), arch=8, pcie=pcie)
        for k in range(2)
    ]
    return FakeSystem(gpus, {(0, 1): 30}, p2p_ok=p2p)


def dual_socket() -> FakeSystem:
    """4 GPUs, two per PCIe switch, one switch per socket."""
    gpus = [
        FakeGpu("NVIDIA L40S", f"GPU-l40s-{k}", _bus(k), arch=8, pcie=(4, 16, 4, 16), numa=k // 2)
        for k in range(4)
    ]
    ancestor = {(0, 1): 10, (2, 3): 10}
    return FakeSystem(gpus, ancestor)


def rtx3090_bridge() -> FakeSystem:
    """2 x RTX 3090 joined by an NVLink bridge (4 links)."""
    gpus = [
        FakeGpu("NVIDIA GeForce RTX 3090", f"GPU-3090-{k}", _bus(k), arch=7, pcie=(4, 16, 4, 16))
        for k in range(2)
    ]
    gpus[0].peers = {gpus[1].bus_id: 4}
    gpus[1].peers = {gpus[0].bus_id: 4}
    return FakeSystem(gpus, {(0, 1): 30})
