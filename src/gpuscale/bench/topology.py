"""GPU-to-GPU topology: from NVML, or parsed from saved ``nvidia-smi topo -m`` text.

Link codes follow ``nvidia-smi topo -m``: ``X`` self, ``NV#`` # NVLinks, ``PIX`` one PCIe
switch, ``PXB`` several PCIe switches, ``PHB`` a PCIe host bridge (through the CPU),
``NODE`` across host bridges within a NUMA node, ``SYS`` across NUMA nodes / sockets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gpuscale.links import TOPOLOGY_PRESET

# Slowest first: the worst link between two GPUs bounds a ring all-reduce.
LINK_ORDER = ("SYS", "NODE", "PHB", "PXB", "PIX", "NV")
_CODE = re.compile(r"^(X|NV\d+|PIX|PXB|PHB|NODE|SYS|SOC)$")


@dataclass(frozen=True, slots=True)
class Topology:
    """GPU names and the link code of every ordered pair (``links[(i, j)]``)."""

    gpus: list[str]
    links: dict[tuple[int, int], str] = field(default_factory=dict)

    def matrix(self) -> list[list[str]]:
        n = len(self.gpus)
        return [
            ["X" if i == j else self.links.get((i, j), "?") for j in range(n)] for i in range(n)
        ]

    def slowest_link(self) -> str | None:
        """The slowest link class between any two GPUs (``NV`` for NVLink), or None."""
        classes = {_class(code) for code in self.links.values()}
        for link in LINK_ORDER:
            if link in classes:
                return link
        return None

    def preset(self) -> str | None:
        """The interconnect preset of the slowest link (see ``gpuscale.links``)."""
        slowest = self.slowest_link()
        return TOPOLOGY_PRESET.get(slowest) if slowest else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "gpus": self.gpus,
            "matrix": self.matrix(),
            "slowest_link": self.slowest_link(),
            "preset": self.preset(),
        }


def _class(code: str) -> str:
    if code.startswith("NV"):
        return "NV"
    return "SYS" if code == "SOC" else code  # SOC: older drivers' name for SYS


def parse_topo_matrix(text: str) -> Topology:
    """Parse ``nvidia-smi topo -m`` output (GPU rows and columns only; NICs ignored).

    The header row lists the columns (``GPU0 GPU1 NIC0 CPU Affinity ...``); each GPU row
    starts with its name, then one link code per column. Raises ``ValueError`` when the
    text has no GPU matrix.
    """
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)  # colour codes of newer drivers
    rows = [line.split() for line in text.splitlines() if line.split()]
    header = next((r for r in rows if r[0] == "GPU0" and (len(r) < 2 or r[1] != "X")), None)
    if header is None:
        raise ValueError("no GPU header row (GPU0 GPU1 ...) in the topology text")
    columns = [i for i, name in enumerate(header) if re.fullmatch(r"GPU\d+", name)]
    gpus = [header[i] for i in columns]
    links: dict[tuple[int, int], str] = {}
    seen = 0
    for cells in rows:
        if cells is header or not re.fullmatch(r"GPU\d+", cells[0]) or cells[0] not in gpus:
            continue
        i = gpus.index(cells[0])
        seen += 1
        for j, column in enumerate(columns):
            value = cells[column + 1] if column + 1 < len(cells) else ""
            if i != j and _CODE.match(value):
                links[(i, j)] = value
    if not seen:
        raise ValueError("no GPU rows in the topology text")
    return Topology(gpus=gpus, links=links)


def nvml_topology() -> dict[str, Any] | None:
    """The topology of this machine's GPUs from NVML, or None without NVML/GPUs."""
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:
        return None
    try:
        count = pynvml.nvmlDeviceGetCount()
        handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(count)]
        names = [f"GPU{i}" for i in range(count)]
        levels = {0: "X", 10: "PIX", 20: "PXB", 30: "PHB", 40: "NODE", 50: "SYS"}
        links: dict[tuple[int, int], str] = {}
        buses = [pynvml.nvmlDeviceGetPciInfo(h).busId for h in handles]
        for i in range(count):
            nvlinks = _nvlink_peers(pynvml, handles[i])
            for j in range(count):
                if i == j:
                    continue
                n = nvlinks.get(buses[j], 0)
                if n:
                    links[(i, j)] = f"NV{n}"
                else:
                    level = pynvml.nvmlDeviceGetTopologyCommonAncestor(handles[i], handles[j])
                    links[(i, j)] = levels.get(int(level), "SYS")
        return Topology(gpus=names, links=links).to_dict()
    except Exception as exc:  # NVML varies by driver; topology is informative only
        return {"error": f"NVML topology query failed: {exc}"}
    finally:
        pynvml.nvmlShutdown()


def _nvlink_peers(pynvml: Any, handle: Any) -> dict[Any, int]:
    peers: dict[Any, int] = {}
    for link in range(18):  # NVML_NVLINK_MAX_LINKS on Hopper
        try:
            if pynvml.nvmlDeviceGetNvLinkState(handle, link):
                bus = pynvml.nvmlDeviceGetNvLinkRemotePciInfo(handle, link).busId
                peers[bus] = peers.get(bus, 0) + 1
        except Exception:
            break
    return peers
