"""Is this interconnect healthy? The latest sweep's bus bandwidth against what its slowest
link should give, against earlier sweeps, and what to check when it falls short.

Per collective, the peak bus bandwidth of the latest sweep (its largest sizes) is read as
a share of the expected figure (``Topology.expected_busbw_gbs`` or a named preset, see
``gpuscale.hardware.links``): at least 70% is **normal**, 35-70% **low**, below
35% **suspicious**, and more than 115% **suspicious** too unless NVLink SHARP explains it
(an all-reduce through NVSwitch on Hopper or Blackwell: the switch reduces, so busbw
exceeds the link; ~480 GB/s on 8 H100s). CPU processes have no reference, not even a
preset asked for (a GPU-to-GPU link's or a network's: the verdict says which), and a
sweep on one node is not judged against a network preset (no network was crossed); a
sweep across nodes is, through its NICs as the advice costs the network (``expected``). A
peak more than 15% below an earlier sweep's of the same collective and ranks is reported
as a drop, and one more than 15% above it as a rise, where the two ran alike (backend,
device kind, nodes, settings), over the sizes both measured, with at least 10 timed calls
per size each, and beyond the spread of their calls (p50 to p99): noise is said to be
noise, and only a peak within 15% either way is "within".
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuscale.hardware.links import PRESETS, get_preset
from gpuscale.interconnect.expected import Header, expected_busbw, nodes_of, per_node
from gpuscale.interconnect.nccl import backend_for
from gpuscale.interconnect.topology import Topology
from gpuscale.quantities import format_bytes, number
from gpuscale.tables.codes import Code
from gpuscale.tables.json_depth import JSON

if TYPE_CHECKING:
    import pandas as pd

    from gpuscale.interconnect.records import Sweeps

NORMAL, LOW, SUSPICIOUS, NO_REFERENCE = "normal", "low", "suspicious", "no reference"
# the verdict of a peak at or above each share of the expected bandwidth, highest first;
# below the last (or NaN): SUSPICIOUS
_SHARES = ((0.7, NORMAL), (0.35, LOW))
DROP_SHARE = 0.15
MIN_ITERS = 10  # timed calls per size below which two sweeps' peaks are not compared
ALIKE = ("backend", "device", "nodes")  # what two sweeps compared share (header fields)
ALIKE_SETTINGS = ("gap_ms", "load")


class ChangeKind(Code):
    """How the latest sweep's peak compares with the best earlier sweep that ran alike."""

    DROPPED = "dropped"  # lower beyond DROP_SHARE and beyond the calls' own spread
    ROSE = "rose"  # higher beyond DROP_SHARE and beyond the calls' own spread
    NOISE = "noise"  # lower or higher beyond DROP_SHARE, within the calls' own spread
    WITHIN = "within"  # within DROP_SHARE either way
    TOO_FEW_CALLS = "too few calls"  # one sweep timed fewer than MIN_ITERS calls per size


@dataclass(frozen=True, slots=True)
class SweepChange:
    """The latest sweep's peak against ``against``, the best earlier sweep that ran alike,
    over the sizes both measured: both peaks (GB/s) and the larger of ``DROP_SHARE`` and
    either peak's call-to-call spread (``noise_share``); for ``TOO_FEW_CALLS``, the sweep
    that timed too few calls (``this``, or the earlier one's id) and how many
    (``iters``); ``suspects``: what may have changed, by the backend."""

    kind: ChangeKind
    against: str
    before_gbs: float = math.nan
    now_gbs: float = math.nan
    noise_share: float = math.nan
    iters: int | None = None
    suspects: str = ""

    @property
    def ratio(self) -> float:
        """The latest peak over the earlier one (1: the same; NaN: not compared)."""
        return self.now_gbs / self.before_gbs

    @property
    def lower_share(self) -> float:
        """How much lower the latest peak is (negative: higher)."""
        return 1 - self.ratio

    def sentence(self) -> str:
        return _CHANGE_WORDS[self.kind].format(
            c=self,
            share=abs(self.lower_share),
            way="lower" if self.lower_share > 0 else "higher",
            drop_or_rise="drop" if self.lower_share > 0 else "rise",
            whose="this sweep's" if self.against == "this" else f"sweep {self.against}'s",
            before=number(self.before_gbs),
            now=number(self.now_gbs),
            min_iters=MIN_ITERS,
            drop=DROP_SHARE,
        )


_CHANGE_WORDS = {
    ChangeKind.DROPPED: "DROPPED {c.lower_share:.0%} since sweep {c.against} ({before} -> {now} "
    "GB/s, beyond its noise): something changed ({c.suspects})",
    ChangeKind.ROSE: "ROSE {share:.0%} since sweep {c.against} ({before} -> {now} GB/s, beyond "
    "its noise): something changed ({c.suspects})",
    ChangeKind.NOISE: "{share:.0%} {way} than sweep {c.against} ({before} -> {now} GB/s), within "
    "the calls' own spread ({c.noise_share:.0%}, p50 to p99): noise, not a {drop_or_rise}",
    ChangeKind.WITHIN: "within {drop:.0%} of the best earlier sweep ({c.against}: {before} GB/s)",
    ChangeKind.TOO_FEW_CALLS: "Not compared with earlier sweeps: {whose} {c.iters} timed calls "
    "per size are too few to tell a change from noise (--iters {min_iters} or more)",
}


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
    change: SweepChange | None = None  # None: no earlier sweep ran alike

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
        if self.change is not None:
            text += f". {self.change.sentence()}"
        return text + "."


def _nvls_possible(topology: Topology | None, op: str) -> bool:
    return bool(
        op == "all_reduce"
        and topology is not None
        and topology.nvswitch
        and topology.nvlink_generation in ("nvlink4", "nvlink5")
    )


def _causes(topology: Topology | None, env: Mapping[str, str], nccl: JSON) -> list[str]:
    out = []
    if env.get("NCCL_P2P_DISABLE", "").strip() == "1":
        out.append("NCCL_P2P_DISABLE=1 sends GPU traffic through host memory")
    if topology is not None:
        out += [f"{x} (a link trained below its capability)" for x in topology.downtrained()]
        refused = sorted({f"GPU{i}-GPU{j}" for (i, j), s in topology.p2p.items() if s != "OK"})
        part = topology.part()
        if part is not None and not part.device.p2p_pcie:  # GeForce: the driver, not the tree
            between = ""
            if refused:
                between = f" between {', '.join(refused[:4])}"
            out.append(
                f"P2P not possible{between}: NVIDIA's driver disables P2P over PCIe on "
                f"the {part.device.name} (GeForce), so NCCL copies through host memory; an "
                "NVLink bridge (where the card takes one) avoids it"
            )
        elif refused:
            out.append(
                f"P2P not possible between {', '.join(refused[:4])}: PCIe ACS or the IOMMU may "
                "redirect it through the root complex (check lspci ACSCtl, iommu=pt)"
            )
        if topology.slowest_link() in ("PHB", "NODE", "SYS"):
            through_cpu = (
                "the GPUs meet only through the CPU (nvidia-smi PHB/NODE/SYS): a PCIe switch "
                "or NVLink between them is the fix"
            )
            if topology.p2p_by_driver():
                through_cpu += "; NCCL_P2P_LEVEL=SYS may let P2P through"
            out.append(through_cpu)
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
    sweeps: Sweeps,
    *,
    topology: Topology | None = None,
    preset: str | None = None,
    env: Mapping[str, str] | None = None,
    nics_per_node: int | None = None,
) -> list[OpVerdict]:
    """One verdict per collective of the latest sweep (see the module docstring);
    ``nics_per_node``: the NICs of each node a sweep across nodes went through (None: one
    per device, as the advice assumes); ``ValueError`` below 1. ``preset`` is read whatever
    its case; an unknown one raises ``KeyError`` naming the closest and the known ones."""
    if nics_per_node is not None and nics_per_node < 1:
        raise ValueError(f"NICs per node must be at least 1, got {nics_per_node}")
    if preset is not None:
        preset = get_preset(preset).name
    env = env or {}
    latest = sweeps.latest
    header = sweeps.headers.get(latest, {}) if latest else {}
    nodes = nodes_of(header)
    table = sweeps.results
    ok = table[(table["status"] == "ok") & table["busbw_gbs"].notna()]
    mine = ok[ok["sweep_id"] == latest]
    out = []
    for op, group in mine.groupby("op", sort=False):
        best = group.loc[group["busbw_gbs"].idxmax()]
        peak, size = float(best["busbw_gbs"]), int(best["size_bytes"])
        ranks = int(best["ranks"])
        expected, reference = expected_busbw(header, topology, preset, ranks, nics_per_node)
        ratio = peak / expected if expected else None
        if ratio is None:
            verdict = NO_REFERENCE
        elif ratio > 1.15:
            verdict = NORMAL if _nvls_possible(topology, str(op)) else SUSPICIOUS
        else:
            verdict = next((v for share, v in _SHARES if ratio >= share), SUSPICIOUS)
        causes = []
        if verdict in (LOW, SUSPICIOUS):
            causes = _causes(topology, env, header.get("nccl"))
            if nodes > 1 and preset and PRESETS[preset].kind == "network":
                nics = nics_per_node or per_node(ranks, nodes)
                causes.insert(0, _FEWER_NICS.format(nics=nics, preset=preset))
            if ratio and ratio > 1.15:
                causes = [
                    "busbw above what the link carries: an in-network reduction (SHARP), "
                    "buffers too small to leave the cache, or a wrong GPU count"
                ]
                if nodes == 2 and op == "all_reduce":
                    causes.append(_TWO_NODE_TREE)
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
                change=_change(ok, sweeps.headers, str(op), latest, ranks),
            )
        )
    return out


# A sweep across nodes below its expectation through the NICs: the NICs NCCL used first.
_FEWER_NICS = (
    "fewer NICs in use than the {nics} a node expected, or slower ones than {preset} "
    "(NCCL_DEBUG=INFO lists those NCCL uses, `NET/IB : Using [0]mlx5_0...`; NCCL_IB_HCA "
    "restricts them; ibstat says each port's rate)"
)
# Above it on two nodes: NCCL's tree sends each byte across once, not the ring's
# 2(N-1)/N (NVIDIA/nccl-tests#196, NVIDIA/nccl#812).
_TWO_NODE_TREE = (
    "on two nodes NCCL's tree all-reduce can exceed the NICs' limit as busbw counts it "
    "(NCCL_ALGO=Ring measures the network)"
)


def _alike(a: Header, b: Header) -> bool:
    """Whether two sweeps' headers say they ran alike: the same backend (its transport),
    device kind and nodes, the same compute between calls and load."""
    settings_a, settings_b = a.get("settings") or {}, b.get("settings") or {}
    return all(a.get(k) == b.get(k) for k in ALIKE) and all(
        settings_a.get(k) == settings_b.get(k) for k in ALIKE_SETTINGS
    )


def _noise(row: pd.Series) -> float:
    """The share by which one call's bus bandwidth at a size varies: 1 - p50/p99 of the
    slowest rank's per-call time (0 where the file has no percentiles)."""
    p50, p99 = row.get("time_us_p50"), row.get("time_us_p99")
    if not (isinstance(p50, float | int) and isinstance(p99, float | int)):
        return 0.0
    if not (p50 > 0 and p99 > 0):  # NaN compares false too
        return 0.0
    return max(0.0, 1 - p50 / p99)


def _suspects(header: Header) -> str:
    """What may have changed between two sweeps that ran alike, by their backend."""
    backend = header.get("backend") or backend_for(header.get("device"))
    if backend == "nccl":
        return "driver, P2P, a link, NCCL settings"
    return "other work on the host, CPU frequency, threads per process"


def _iters(header: Header) -> int | None:
    """The timed calls per size a sweep's header says it ran (None: not written)."""
    iters = (header.get("settings") or {}).get("iters")
    return iters if isinstance(iters, int) else None


def _too_few(header: Header) -> bool:
    iters = _iters(header)
    return iters is not None and iters < MIN_ITERS


def _change(
    ok: pd.DataFrame, headers: Mapping[str, Header], op: str, latest: str, ranks: int
) -> SweepChange | None:
    """The latest sweep's peak against the best earlier sweep that ran alike (same
    collective, ranks, backend, device kind, nodes and settings), over the sizes both
    measured: a drop (a rise) only more than :data:`DROP_SHARE` below (above) it and
    beyond either peak's call-to-call noise, and only where both timed at least
    :data:`MIN_ITERS` calls per size."""
    header = headers.get(latest) or {}
    same = ok[(ok["op"] == op) & (ok["ranks"] == ranks)]
    mine = same[same["sweep_id"] == latest]
    found = []  # (their peak row, my peak row over the same sizes, their sweep id)
    for sweep_id, theirs in same[same["sweep_id"] != latest].groupby("sweep_id", sort=False):
        if not _alike(headers.get(sweep_id) or {}, header):
            continue
        sizes = set(theirs["size_bytes"]) & set(mine["size_bytes"])
        if sizes:
            their_peak = theirs.loc[theirs[theirs["size_bytes"].isin(sizes)]["busbw_gbs"].idxmax()]
            my_peak = mine.loc[mine[mine["size_bytes"].isin(sizes)]["busbw_gbs"].idxmax()]
            found.append((their_peak, my_peak, str(sweep_id)))
    enough = [f for f in found if not _too_few(headers.get(f[2]) or {})]
    if not found:
        return None
    if _too_few(header):
        return SweepChange(ChangeKind.TOO_FEW_CALLS, "this", iters=_iters(header))
    if not enough:
        earlier = found[-1][2]
        iters = _iters(headers.get(earlier) or {})
        return SweepChange(ChangeKind.TOO_FEW_CALLS, earlier, iters=iters)
    their_peak, my_peak, best_id = max(enough, key=lambda f: float(f[0]["busbw_gbs"]))
    before, now = float(their_peak["busbw_gbs"]), float(my_peak["busbw_gbs"])
    noise = max(DROP_SHARE, _noise(their_peak), _noise(my_peak))
    kind = ChangeKind.WITHIN
    if now < (1 - noise) * before:
        kind = ChangeKind.DROPPED
    elif now > (1 + noise) * before:
        kind = ChangeKind.ROSE
    elif not (1 - DROP_SHARE) * before <= now <= (1 + DROP_SHARE) * before:
        kind = ChangeKind.NOISE
    return SweepChange(kind, best_id, before, now, noise, suspects=_suspects(header))
