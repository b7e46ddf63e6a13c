"""Is this interconnect healthy? The latest sweep's bus bandwidth against what its slowest
link should give, against earlier sweeps, and what to check when it falls short.

Per collective, the peak bus bandwidth of the latest sweep (its largest sizes) is read as
a share of the expected figure (``Topology.expected_busbw_gbs`` or a named preset, see
``gpuscale.hardware.links``): at least 70% is **normal**, 35-70% **low**, below
35% **suspicious**, and more than 115% **suspicious** too unless NVLink SHARP explains it
(an all-reduce through NVSwitch on Hopper or Blackwell: the switch reduces, so busbw
exceeds the link; ~480 GB/s on 8 H100s). CPU processes have no reference: the verdict says
so. A peak more than 15% below an earlier sweep's of the same collective and ranks is
reported as a drop.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuscale.hardware.links import PRESETS
from gpuscale.interconnect.topology import Topology
from gpuscale.quantities import format_bytes, number

NORMAL, LOW, SUSPICIOUS, NO_REFERENCE = "normal", "low", "suspicious", "no reference"
DROP_SHARE = 0.15


@dataclass(frozen=True, slots=True)
class OpVerdict:
    op: str
    peak_busbw_gbs: float
    peak_size_bytes: int
    expected_busbw_gbs: float | None
    ratio: float | None
    verdict: str
    reference: str
    causes: list[str] = field(default_factory=list)
    change: str = ""

    def sentence(self) -> str:
        text = (
            f"{self.op}: peak bus bandwidth {number(self.peak_busbw_gbs)} GB/s "
            f"(at {format_bytes(self.peak_size_bytes)})"
        )
        if self.ratio is None:
            text += f": {self.reference}"
        else:
            text += (
                f" is {self.ratio:.0%} of the {number(self.expected_busbw_gbs)} GB/s expected "
                f"for {self.reference}: {self.verdict.upper()}"
            )
        if self.causes:
            text += ". Check: " + "; ".join(self.causes)
        if self.change:
            text += f". {self.change}"
        return text + "."


def _nvls_possible(topology: Topology | None, op: str) -> bool:
    return bool(
        op == "all_reduce"
        and topology is not None
        and topology.nvswitch
        and topology.nvlink_generation in ("nvlink4", "nvlink5")
    )


def _causes(
    topology: Topology | None, env: Mapping[str, str], nccl: Mapping[str, Any] | None
) -> list[str]:
    out = []
    if env.get("NCCL_P2P_DISABLE", "").strip() == "1":
        out.append("NCCL_P2P_DISABLE=1 sends GPU traffic through host memory")
    if topology is not None:
        out += [f"{x} (a link trained below its capability)" for x in topology.downtrained()]
        refused = sorted({f"GPU{i}-GPU{j}" for (i, j), s in topology.p2p.items() if s != "OK"})
        if refused:
            out.append(
                f"P2P not possible between {', '.join(refused[:4])}: PCIe ACS or the IOMMU may "
                "redirect it through the root complex (check lspci ACSCtl, iommu=pt)"
            )
        if topology.slowest_link() in ("PHB", "NODE", "SYS"):
            out.append(
                "the GPUs meet only through the CPU (nvidia-smi PHB/NODE/SYS): a PCIe switch "
                "or NVLink between them is the fix; NCCL_P2P_LEVEL=SYS may let P2P through"
            )
    transports = (nccl or {}).get("transports") or {}
    if any(t.startswith("NET/Socket") for t in transports):
        out.append("NCCL used TCP sockets (NET/Socket), not InfiniBand/RoCE: check NCCL_IB_*")
    if not out:
        out.append(
            "which transport NCCL chose (NCCL_DEBUG=INFO: P2P, SHM or NET), GPU clocks "
            "(nvidia-smi -q -d CLOCK), and that no other job shares the GPUs or links"
        )
    return out


def judge(
    sweeps: Any,
    *,
    topology: Topology | None = None,
    preset: str | None = None,
    env: Mapping[str, str] | None = None,
) -> list[OpVerdict]:
    """One verdict per collective of the latest sweep (see the module docstring)."""
    env = env or {}
    latest = sweeps.latest
    header = sweeps.headers.get(latest, {}) if latest else {}
    table = sweeps.results
    ok = table[(table["status"] == "ok") & table["busbw_gbs"].notna()]
    mine = ok[ok["sweep_id"] == latest]
    out = []
    for op, group in mine.groupby("op", sort=False):
        best = group.loc[group["busbw_gbs"].idxmax()]
        peak, size = float(best["busbw_gbs"]), int(best["size_bytes"])
        expected, reference = _expected(header, topology, preset)
        ratio = peak / expected if expected else None
        if ratio is None:
            verdict = NO_REFERENCE
        elif ratio > 1.15:
            verdict = NORMAL if _nvls_possible(topology, str(op)) else SUSPICIOUS
        else:
            verdict = NORMAL if ratio >= 0.7 else LOW if ratio >= 0.35 else SUSPICIOUS
        causes = []
        if verdict in (LOW, SUSPICIOUS):
            causes = _causes(topology, env, header.get("nccl"))
            if ratio and ratio > 1.15:
                causes = [
                    "busbw above what the link carries: an in-network reduction (SHARP), "
                    "buffers too small to leave the cache, or a wrong GPU count"
                ]
        elif verdict == NORMAL and ratio and ratio > 1.15:
            causes = [
                "above the link's ring figure: NVLink SHARP (NVLS) reduces in the switch, "
                "as expected on NVSwitch Hopper/Blackwell systems (nccl-tests#212)"
            ]
        out.append(
            OpVerdict(
                op=str(op),
                peak_busbw_gbs=peak,
                peak_size_bytes=size,
                expected_busbw_gbs=expected,
                ratio=ratio,
                verdict=verdict,
                reference=reference,
                causes=causes,
                change=_change(ok, str(op), latest, int(best["ranks"]), peak),
            )
        )
    return out


def _expected(
    header: Mapping[str, Any], topology: Topology | None, preset: str | None
) -> tuple[float | None, str]:
    if preset:
        p = PRESETS[preset]
        return p.busbw_gbs, f"{p.name} ({p.description})"
    if header.get("device") == "cpu":
        return None, "CPU processes: no reference figure applies (gloo over host memory)"
    if topology is not None and topology.expected_busbw_gbs():
        name = topology.preset() or topology.slowest_link() or "this link"
        return topology.expected_busbw_gbs(), f"{name}, the slowest link between these GPUs"
    return None, "the link was not detected: pass --interconnect or --topo-file"


def _change(ok: Any, op: str, latest: str, ranks: int, peak: float) -> str:
    earlier = ok[(ok["op"] == op) & (ok["ranks"] == ranks) & (ok["sweep_id"] != latest)]
    if earlier.empty:
        return ""
    peaks = earlier.groupby("sweep_id", sort=False)["busbw_gbs"].max()
    best_id, best = peaks.idxmax(), float(peaks.max())
    if peak < (1 - DROP_SHARE) * best:
        return (
            f"DROPPED {1 - peak / best:.0%} since sweep {best_id} ({number(best)} -> "
            f"{number(peak)} GB/s): something changed (driver, P2P, a link, NCCL settings)"
        )
    return f"within {DROP_SHARE:.0%} of the best earlier sweep ({best_id}: {number(best)} GB/s)"
