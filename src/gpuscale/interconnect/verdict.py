"""Is this interconnect healthy? The latest sweep's bus bandwidth against what its slowest
link should give, against earlier sweeps, and what to check when it falls short.

Per collective, the peak bus bandwidth of the latest sweep (its largest sizes) is read as
a share of the expected figure (the ring of the GPUs a one-node sweep ran on,
``expected.sweep_ring``, or a named preset, see ``gpuscale.hardware.links``): at least 70%
is **normal**, 35-70% **low**, below 35% **suspicious**, and more than 115% **suspicious**
too unless NVLink SHARP explains it (an all-reduce through NVSwitch on Hopper or
Blackwell: the switch reduces, so busbw exceeds the link; ~480 GB/s on 8 H100s), up to
:func:`nvls_ceiling_gbs` (the line rate x 2(n-1)/n: each GPU still receives the result). CPU
processes have no reference, not even a preset asked for (a GPU-to-GPU link's or a
network's: the verdict says which), and a sweep on one node is not judged against a
network preset (no network was crossed); a sweep across nodes is, through its NICs as the
advice costs the network (``expected``).
Each verdict carries the peak against earlier sweeps that ran alike
(:mod:`gpuscale.interconnect.changes`: a drop, a rise, noise or within 15%), and the
flags of a sweep run on a busy host (its header's ``host``, as ``bench`` flags a run).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from gpuscale.hardware.links import PRESETS, get_preset
from gpuscale.interconnect.changes import SweepChange, sweep_change
from gpuscale.interconnect.expected import expected_busbw, nodes_of, per_node, sweep_ring
from gpuscale.interconnect.topology import Topology
from gpuscale.plausibility import host_flags
from gpuscale.quantities import format_bytes, joined, number
from gpuscale.tables.json_depth import JSON

if TYPE_CHECKING:
    from gpuscale.interconnect.records import Sweeps

NORMAL, LOW, SUSPICIOUS, NO_REFERENCE = "normal", "low", "suspicious", "no reference"
# the verdict of a peak at or above each share of the expected bandwidth, highest first;
# below the last (or NaN): SUSPICIOUS
_SHARES = ((0.7, NORMAL), (0.35, LOW))


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
    # the topology's GPUs the expected figure is the ring of, that ring's link class and
    # preset (``Topology.ring_of``); None where it is no ring of the topology's (a preset
    # set it, CPU processes, a sweep across nodes, no topology)
    gpus: tuple[int, ...] | None = None
    ring_link: str | None = None
    ring_preset: str | None = None
    # the flags the sweep's host load raises (``plausibility.host_flags``: a busy host,
    # CPU steal), read off its header's ``host``; none where not measured or quiet
    host: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, JSON]:
        """The verdict as JSON, every field: its figures, what it was judged against
        (``reference``, the ring), the change since earlier sweeps and the sentence."""
        return {
            "op": self.op,
            "peak_busbw_gbs": self.peak_busbw_gbs,
            "peak_size_bytes": self.peak_size_bytes,
            "expected_busbw_gbs": self.expected_busbw_gbs,
            "ratio": self.ratio,
            "verdict": self.verdict,
            "reference": self.reference,
            "gpus": None if self.gpus is None else list(self.gpus),
            "ring_link": self.ring_link,
            "ring_preset": self.ring_preset,
            "causes": list(self.causes),
            "host": list(self.host),
            "change": None if self.change is None else self.change.to_dict(),
            "sentence": self.sentence(),
        }

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
        if self.host:  # whatever the verdict: the calls shared the host's CPUs
            text += ". " + "; ".join(f[:1].upper() + f[1:] for f in self.host)
        return text + "."


def _nvls_possible(topology: Topology | None, op: str) -> bool:
    return bool(
        op == "all_reduce"
        and topology is not None
        and topology.nvswitch
        and topology.nvlink_generation in ("nvlink4", "nvlink5")
    )


def nvls_ceiling_gbs(generation: str, ranks: int) -> float | None:
    """The most all-reduce bus bandwidth (GB/s) NVLink SHARP can show on ``ranks`` GPUs:
    even reduced in the switch, each GPU receives the whole result over its NVLinks, so
    the algorithm bandwidth stays within their line rate per direction, and busbw is it
    x 2(n-1)/n (787.5 GB/s on 8 H100s, which measure ~480); None where the generation's
    line rate is not known."""
    line = PRESETS[generation].line_rate_gbs if generation in PRESETS else None
    return None if line is None else line * 2 * (ranks - 1) / ranks


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
        if topology.ring_link() in ("PHB", "NODE", "SYS"):  # the ring's, not a pair's off it
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
    gpus: Sequence[int] | None = None,
    sweep_id: str | None = None,
) -> list[OpVerdict]:
    """One verdict per collective of the sweep ``sweep_id``, by default the file's latest
    (one run beside another into the same file may not be the last written) (see the
    module docstring); ``nics_per_node``: the NICs of each node a sweep across nodes went
    through (None: one per device, as the advice assumes); ``ValueError`` below 1.
    ``preset`` is read whatever its case; an unknown one raises ``KeyError`` naming the
    closest and the known ones. ``gpus``: the indices of ``topology``'s GPUs a one-node
    sweep's ranks ran on, in rank order (None: as its header says,
    ``expected.sweep_gpus``); the expected figure and the causes named are those of their
    ring."""
    if nics_per_node is not None and nics_per_node < 1:
        raise ValueError(f"NICs per node must be at least 1, got {nics_per_node}")
    if preset is not None:
        preset = get_preset(preset).name
    env = env or {}
    latest = sweep_id or sweeps.latest
    header = sweeps.headers.get(latest, {}) if latest else {}
    nodes = nodes_of(header)
    host = header.get("host") if isinstance(header.get("host"), dict) else None
    busy = tuple(host_flags(host, during="the sweep"))  # type: ignore[arg-type]
    table = sweeps.results
    ok = table[(table["status"] == "ok") & table["busbw_gbs"].notna()]
    mine = ok[ok["sweep_id"] == latest]
    out = []
    for op, group in mine.groupby("op", sort=False):
        best = group.loc[group["busbw_gbs"].idxmax()]
        peak, size = float(best["busbw_gbs"]), int(best["size_bytes"])
        ranks = int(best["ranks"])
        ring = sweep_ring(header, topology, preset, ranks, gpus) if ranks > 1 else None
        expected: float | None = None
        reference = _ONE_RANK  # the worker run alone on one device: nothing crossed a link
        if ranks > 1:
            expected, reference = expected_busbw(
                header, topology, preset, ranks, nics_per_node, ring.gpus if ring else None
            )
        # the links the ranks crossed: those between their GPUs, on one node
        local = topology.within(ring.gpus) if topology is not None and ring else topology
        ring = ring if expected is not None else None  # the figure is that ring's
        ratio = peak / expected if expected else None
        ceiling = None  # NVLink SHARP's most, where it may explain a peak above the figure
        if topology is not None and _nvls_possible(topology, str(op)):
            ceiling = nvls_ceiling_gbs(str(topology.nvlink_generation), ranks)
        if ratio is None:
            verdict = NO_REFERENCE
        elif ratio > 1.15:
            nvls = _nvls_possible(topology, str(op)) and (ceiling is None or peak <= ceiling)
            verdict = NORMAL if nvls else SUSPICIOUS
        else:
            verdict = next((v for share, v in _SHARES if ratio >= share), SUSPICIOUS)
        causes = []
        wrong = group.loc[group["wrong"].fillna(0) > 0] if "wrong" in group else group.iloc[:0]
        if len(wrong):  # wrong data back: no bandwidth of it is to be trusted, whatever it is
            verdict = SUSPICIOUS
        if verdict in (LOW, SUSPICIOUS):
            causes = _causes(local, env, header.get("nccl"))
            if nodes > 1 and preset and PRESETS[preset].kind == "network":
                nics = nics_per_node or per_node(ranks, nodes)
                causes.insert(0, _FEWER_NICS.format(nics=nics, preset=preset))
            if ratio and ratio > 1.15 and ceiling is not None:  # NVLS can show, not this
                causes = [
                    f"busbw above even NVLink SHARP's ceiling, {number(ceiling)} GB/s (the "
                    "line rate x 2(n-1)/n): buffers too small to leave the cache, or a wrong "
                    "GPU count"
                ]
            elif ratio and ratio > 1.15:
                causes = [
                    "busbw above what the link carries: an in-network reduction (SHARP), "
                    "buffers too small to leave the cache, or a wrong GPU count"
                ]
                if nodes == 2 and op == "all_reduce":
                    causes.append(_TWO_NODE_TREE)
        if len(wrong):  # first: what the check found
            sizes = joined([format_bytes(int(b)) for b in sorted(set(wrong["size_bytes"]))])
            causes.insert(
                0,
                f"{int(wrong['wrong'].sum()):,} wrong elements came back at {sizes} (the "
                "check of each size's last call, nccl-tests' #wrong): a faulty link, GPU "
                "memory or NCCL build; fix that before reading any bandwidth",
            )
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
                change=sweep_change(ok, sweeps.headers, str(op), latest, ranks),
                gpus=ring.gpus if ring else None,
                ring_link=ring.link if ring else None,
                ring_preset=ring.preset if ring else None,
                host=busy,
            )
        )
    return out


# A sweep of one rank (the worker under torchrun on one device): no link to judge.
_ONE_RANK = (
    "one rank: no link between devices was crossed (all-reduce's busbw is 0 by nccl-tests' "
    "2(n-1)/n; others time a local copy); run on 2 or more devices"
)
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
