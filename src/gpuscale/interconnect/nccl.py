"""NCCL's settings checked against its documentation, and what NCCL says it chose.

:func:`check_env` validates ``NCCL_*`` variables against the values the NCCL user guide
("Environment Variables", docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html)
documents, each warning with the documentation's meaning in one line.
:func:`parse_debug_log` reads ``NCCL_DEBUG=INFO`` output: the version, the transport of
every channel (P2P, SHM, network), the network used, NVLink SHARP (NVLS) support and, where
NCCL printed them, the algorithm and protocol of each collective.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

_LEVELS = ("LOC", "NVL", "PIX", "PXB", "PHB", "SYS")
_ALGOS = ("Tree", "Ring", "CollnetDirect", "CollnetChain", "NVLS", "NVLSTree", "PAT")
_PROTOS = ("LL", "LL128", "Simple")


def backend_for(device: object) -> str:
    """The torch.distributed backend ranks on a ``device`` type run (``cuda``: NCCL; the
    CPU: gloo)."""
    return "nccl" if device == "cuda" else "gloo"


@dataclass(frozen=True, slots=True)
class Setting:
    """A documented variable: what it does and how to tell a valid value."""

    meaning: str
    valid: str  # human description of the accepted values
    pattern: str  # regular expression a valid value matches (case-insensitive)


def _list_of(names: tuple[str, ...]) -> str:
    item = "|".join(names)
    return rf"\^?({item})(,({item}))*"


SETTINGS: dict[str, Setting] = {
    "NCCL_NTHREADS": Setting(
        "CUDA threads per block NCCL launches",
        "64, 128, 256 or 512",
        r"64|128|256|512",
    ),
    "NCCL_BUFFSIZE": Setting(
        "bytes of the buffer NCCL uses per channel between a pair of ranks (default 4194304)",
        "an integer number of bytes (e.g. 4194304, not 4MB)",
        r"\d+",
    ),
    "NCCL_P2P_DISABLE": Setting(
        "disables direct GPU-to-GPU (P2P) transfers over NVLink or PCIe", "0 or 1", r"[01]"
    ),
    "NCCL_P2P_LEVEL": Setting(
        "the farthest path over which NCCL uses P2P between GPUs",
        "LOC, NVL, PIX, PXB, PHB, SYS (or 0-5)",
        r"LOC|NVL|PIX|PXB|PHB|SYS|[0-5]",
    ),
    "NCCL_NET_GDR_LEVEL": Setting(
        "the farthest path over which a NIC reads GPU memory directly (GPUDirect RDMA)",
        "LOC, PIX, PXB, PHB, SYS (or 0-5)",
        r"LOC|PIX|PXB|PHB|SYS|[0-5]",
    ),
    "NCCL_SHM_DISABLE": Setting(
        "disables shared host memory between processes (then the network is used)",
        "0 or 1",
        r"[01]",
    ),
    "NCCL_IB_DISABLE": Setting(
        "disables InfiniBand/RoCE (then IP sockets are used)", "0 or 1", r"[01]"
    ),
    "NCCL_NVLS_ENABLE": Setting("NVLink SHARP (in-switch reductions)", "0 or 1", r"[01]"),
    "NCCL_ALGO": Setting(
        "the algorithms NCCL may use (a ^ prefix excludes)",
        ", ".join(_ALGOS),
        _list_of(_ALGOS),
    ),
    "NCCL_PROTO": Setting(
        "the protocols NCCL may use (a ^ prefix excludes)",
        ", ".join(_PROTOS),
        _list_of(_PROTOS),
    ),
    "NCCL_MIN_NCHANNELS": Setting("the fewest channels NCCL uses", "a whole number", r"\d+"),
    "NCCL_MAX_NCHANNELS": Setting("the most channels NCCL uses", "a whole number", r"\d+"),
    "NCCL_DEBUG": Setting(
        "what NCCL logs", "VERSION, WARN, INFO or TRACE", r"VERSION|WARN|INFO|TRACE"
    ),
    "NCCL_CROSS_NIC": Setting(
        "whether a ring may leave through one NIC and enter through another", "0, 1 or 2", r"[012]"
    ),
}


@dataclass(frozen=True, slots=True)
class EnvCheck:
    """One finding about the NCCL environment: ``warning`` or ``note``."""

    variable: str
    value: str
    level: str
    message: str


def check_env(env: Mapping[str, str], *, nvlink: bool = False) -> list[EnvCheck]:
    """Every ``NCCL_*`` setting outside its documented values, and settings that undo the
    hardware (P2P disabled where GPUs share NVLink). Unknown variables are noted, not
    judged."""
    out = []
    for name, value in sorted(env.items()):
        if not name.startswith("NCCL_"):
            continue
        setting = SETTINGS.get(name)
        if setting is None:
            continue
        if not re.fullmatch(setting.pattern, value.strip(), re.I):
            out.append(
                EnvCheck(
                    name,
                    value,
                    "warning",
                    f"{name}={value} is not a documented value ({setting.valid}); it sets "
                    f"{setting.meaning}",
                )
            )
    if nvlink and env.get("NCCL_P2P_DISABLE", "").strip() == "1":
        out.append(
            EnvCheck(
                "NCCL_P2P_DISABLE",
                "1",
                "warning",
                "NCCL_P2P_DISABLE=1 on GPUs joined by NVLink: traffic goes through host memory "
                "instead of NVLink",
            )
        )
    level = env.get("NCCL_P2P_LEVEL", "").strip().upper()
    if nvlink and level in ("LOC", "0"):
        out.append(
            EnvCheck(
                "NCCL_P2P_LEVEL",
                level,
                "warning",
                "NCCL_P2P_LEVEL=LOC never uses P2P, NVLink included",
            )
        )
    return out


@dataclass
class NcclLog:
    """What ``NCCL_DEBUG=INFO`` output says NCCL chose."""

    version: str = ""
    transports: Counter[str] = field(default_factory=Counter)
    network: str = ""
    nvls: bool | None = None
    algorithms: Counter[str] = field(default_factory=Counter)

    def to_dict(self) -> dict[str, object]:
        return {
            "version": self.version,
            "transports": dict(self.transports),
            "network": self.network,
            "nvls": self.nvls,
            "algorithms": dict(self.algorithms),
        }


def parse_debug_log(text: str) -> NcclLog:
    """The choices NCCL logged (``NCCL_DEBUG=INFO``; algorithms need
    ``NCCL_DEBUG_SUBSYS`` including ``TUNING`` or ``COLL``)."""
    log = NcclLog()
    log.version = (re.findall(r"NCCL version ([\d.]+\S*)", text) or [""])[0]
    for match in re.finditer(r"via (P2P/[\w/]+|SHM/[\w/]+|NET/[\w/]+|COLLNET/[\w/]+)", text):
        log.transports[match.group(1).split("/")[0] + "/" + match.group(1).split("/")[1]] += 1
    log.network = (re.findall(r"Using network (\w+)", text) or [""])[-1]
    if re.search(r"NVLS multicast support is available", text):
        log.nvls = True
    elif re.search(r"NVLS multicast support is not available|NVLS.*disabled", text):
        log.nvls = False
    for match in re.finditer(r"algo (\w+) proto (\w+)", text, re.I):
        log.algorithms[f"{match.group(1)}/{match.group(2)}"] += 1
    return log
