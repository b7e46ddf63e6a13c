"""The interconnect's tables as the commands print them: a collectives sweep as nccl-tests
prints it (one table per collective) and a topology as ``nvidia-smi topo -m`` lays it out
(the GPU matrix, the NICs against the GPUs, the CPU/NUMA affinities; or one wide table)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import fields, replace

import pandas as pd

from gpuscale.interconnect.changes import SweepChange
from gpuscale.interconnect.nccl import check_env
from gpuscale.interconnect.topology import Topology
from gpuscale.interconnect.verdict import OpVerdict
from gpuscale.plausibility import NOISY_P95_OVER_P50
from gpuscale.quantities import format_bytes, number
from gpuscale.tables.json_depth import JSON
from gpuscale.tables.views import TableView

# nccl-tests prints times and bandwidths with two decimals
SWEEP_TWO_DECIMALS = ("time (us)", "p99 (us)", "algbw (GB/s)", "busbw (GB/s)")
# where a sweep table's columns dropped for width are (`collectives -f csv` writes the
# verdicts, not these tables)
SWEEP_REST = "each size's every field: its row in the --out file"


def sweep_failures(latest: pd.DataFrame) -> list[str]:
    """One line per collective of the sweep that did not run: ``op: status (reason)``."""
    failed = latest[latest["status"] != "ok"]
    return [
        f"{row.op}: {row.status} "
        f"({row.error if isinstance(row.error, str) else 'out of memory on a rank'})"
        for row in failed.itertuples(index=False)
    ]


def sweep_spread(latest: pd.DataFrame) -> list[str]:
    """One sentence per collective whose mean call time (``time (us)``, as nccl-tests
    prints it, and the bandwidths made from it) is more than ``NOISY_P95_OVER_P50`` times
    its median call at some size: a few calls far slower than the rest, as on a busy
    machine or a shared link, the bench's noise rule (a tail that far above the median)
    read on the calls of one size. None where every size's mean is near its median."""
    ok = latest[latest["status"] == "ok"]
    said = []
    for op, group in ok.groupby("op", sort=False):
        mean = pd.to_numeric(group["time_us"], errors="coerce")
        median = pd.to_numeric(group["time_us_p50"], errors="coerce")
        ratio = (mean / median).where(median > 0)
        slow = ratio > NOISY_P95_OVER_P50
        if not slow.any():
            continue
        worst = ratio.idxmax()
        said.append(
            f"{op}: at {int(slow.sum())} of {len(group)} sizes the mean call time shown is "
            f"over {NOISY_P95_OVER_P50:g}x the median call's, its slowest rank's (up to "
            f"{ratio[worst]:.1f}x, "
            f"{number(float(mean[worst]))} against {number(float(median[worst]))} us at "
            f"{format_bytes(int(group['size_bytes'][worst]))}): a few calls far slower than "
            "the rest, as on a busy machine or a shared link, and the bandwidths, made from "
            "the mean, as low; run it again with nothing else running (each size's median "
            "is time_us_p50 in the results file)"
        )
    return said


def sweep_said(settings: Sequence[str], latest: pd.DataFrame) -> list[str]:
    """What ``collectives`` says under its verdict: each NCCL setting found
    (``nccl.check_env``' messages), then each collective that did not run
    (:func:`sweep_failures`)."""
    return [*(f"NCCL setting: {s}" for s in settings), *sweep_failures(latest)]


# a verdict's change since earlier sweeps, as CSV's change_* columns (SweepChange.to_dict)
_CHANGE_KEYS = (*(f.name for f in fields(SweepChange)), "sentence")


def _verdict_row(verdict: OpVerdict) -> dict[str, object]:
    """A verdict's ``to_dict`` as one CSV row: its lists as tuples (written "; "-separated)
    and its change as ``change_*`` columns, empty where no earlier sweep ran alike."""
    record = verdict.to_dict()
    change = record.pop("change") or {}
    row = {k: tuple(v) if isinstance(v, list) else v for k, v in record.items()}
    return row | {f"change_{k}": change.get(k) for k in _CHANGE_KEYS}


def verdict_view(
    verdicts: Sequence[OpVerdict], sweep_id: str, settings: Sequence[str], latest: pd.DataFrame
) -> TableView:
    """The verdicts as ``collectives -f csv`` and ``-f json`` write them. CSV: a row per
    collective, every field of ``OpVerdict.to_dict``, what the terminal says under the
    verdict (:func:`sweep_said`) on stderr; JSON: one document, the sweep's id, the
    verdict records as ``to_dict`` gives them, the NCCL settings found (their messages)
    and the collectives that did not run (``op: status (reason)``)."""
    frame = pd.DataFrame([_verdict_row(v) for v in verdicts])
    if "change_iters" in frame:  # a count, never 20.0 beside a verdict with no change
        frame["change_iters"] = frame["change_iters"].astype("Int64")
    document = {
        "sweep_id": sweep_id,
        "verdicts": [v.to_dict() for v in verdicts],
        "nccl_settings": list(settings),
        "not_run": sweep_failures(latest),
    }
    return TableView(
        frame,
        list(frame.columns),
        said=tuple(sweep_said(settings, latest)),
        document=document,
        keys=("op",),
    )


def sweep_tables(latest: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(title, table) per collective that ran: size, count, type, redop, root, time,
    algbw (GB/s) and busbw (GB/s), #wrong, as nccl-tests names them."""
    ok = latest[latest["status"] == "ok"]
    tables = []
    for op, group in ok.groupby("op", sort=False):
        frame = pd.DataFrame(
            {
                "size": group["size_bytes"].map(format_bytes),
                "size (B)": group["size_bytes"].astype("Int64"),
                "count (elements)": group["count"].astype("Int64"),
                # object first: a column of rows that all lack it is float (NaN), and
                # pandas 4 refuses a text fill there
                "type": group["dtype"].astype(object).fillna("float32"),
                "redop": group["redop"].astype(object).fillna("sum"),
                "root": group["root"].astype("Int64"),
                "placement": group["placement"],
                "time (us)": group["time_us"],
                "p99 (us)": group["time_us_p99"],
                "algbw (GB/s)": group["algbw_gbs"],
                "busbw (GB/s)": group["busbw_gbs"],
                "#wrong": group["wrong"].astype("Int64"),
            }
        )
        ranks = int(group["ranks"].iloc[0])
        tables.append((f"{op} on {ranks} ranks (sweep {group['sweep_id'].iloc[0]})", frame))
    return tables


def topology_info(topology: Topology, env: Mapping[str, str] | None) -> dict[str, JSON]:
    """``topology.to_dict()``; with ``env`` (this machine's environment, for a topology
    read here) also its ``NCCL_*`` settings and what :func:`check_env` says of them."""
    info = topology.to_dict()
    if env is not None:  # this machine's: its versions and settings belong with it
        info["nccl_env"] = {k: v for k, v in env.items() if k.startswith("NCCL_")}
        info["nccl_checks"] = [c.message for c in check_env(info["nccl_env"])]
    return info


def topology_tables(topology: Topology, *, wide: bool) -> list[tuple[str, pd.DataFrame]]:
    """(title, table) pairs: the GPU matrix, the NICs against the GPUs and the CPU/NUMA
    affinities (each only where it has something), or with ``wide`` one table with a row
    per GPU and every column named (CSV)."""
    names = [g.name for g in topology.gpus]
    matrix = pd.DataFrame(topology.matrix(), columns=names)
    matrix.insert(0, "gpu", names)
    affinity = pd.DataFrame(
        {
            "gpu": names,
            "cpu_affinity": [g.cpu_affinity for g in topology.gpus],
            "numa_node": [g.numa_node for g in topology.gpus],
        }
    )
    if wide:
        table = matrix.merge(affinity, on="gpu")
        for nic in topology.nics:
            table[nic.name] = list(nic.to_gpus) + [""] * (len(names) - len(nic.to_gpus))
        return [("", table)]
    nics = pd.DataFrame(
        [
            [n.name, n.device, *n.to_gpus, *[""] * (len(names) - len(n.to_gpus))]
            for n in topology.nics
        ],
        columns=["nic", "device", *names],
    )
    tables = [(f"GPU topology ({topology.source})", matrix)]
    if len(nics):
        tables.append(("NICs to GPUs", nics))
    if (affinity[["cpu_affinity", "numa_node"]] != "").any().any():
        tables.append(("CPU and NUMA affinity", affinity))
    return tables


def sweep_views(latest: pd.DataFrame) -> list[TableView]:
    """:func:`sweep_tables` as views, times and bandwidths with two decimals as nccl-tests
    prints them."""
    formats = dict.fromkeys(SWEEP_TWO_DECIMALS, ".2f")
    return [
        TableView(table, list(table.columns), title, formats=formats)
        for title, table in sweep_tables(latest)
    ]


def topology_views(topology: Topology, info: dict[str, JSON], *, terminal: bool) -> list[TableView]:
    """:func:`topology_tables` as views (``terminal``: several, else one wide table): the
    verdict, the slowest link and the bus bandwidth to expect of it, then the part a GPU
    name that leaves it open was read as (``--gpu H100``: the SXM5 part, whose NVLink the
    verdict prices), above the first (``headline``), any downtrained link and the NCCL
    settings in words under the last; for a machine format all of them on stderr beside it
    (data only on stdout)."""
    tables = topology_tables(topology, wide=not terminal)
    warned = matrix_warnings(info)
    part = topology.part()
    verdict = (link_sentence(topology, info), *([part.assumed] if part and part.assumed else []))
    lines = (*info.get("downtrained", []), *info.get("nccl_checks", []))
    views = [TableView(table, list(table.columns), title) for title, table in tables]
    if not terminal:
        return [*views[:-1], replace(views[-1], notes=(*warned, *verdict, *lines))]
    first = replace(views[0], headline=(*warned, *verdict))
    views = [first, *views[1:]]
    return [*views[:-1], replace(views[-1], said=lines)]


def matrix_warnings(info: Mapping[str, JSON]) -> tuple[str, ...]:
    """``WARNING: ...``, one for each problem of a saved matrix (``info``:
    ``topology.to_dict()``), what every view of the topology says first."""
    problems = info.get("matrix_problems")
    return tuple(f"WARNING: {p}" for p in problems) if isinstance(problems, list) else ()


def link_sentence(topology: Topology, info: Mapping[str, JSON]) -> str:
    """``slowest link: NV (NVSwitch, nvlink4) -> preset nvlink4; expected ...``, or why
    there is no link to judge; ``info`` is ``topology.to_dict()``. Where the ring the
    all-reduce runs over is faster than the slowest pair (an NVLink ring with PCIe across
    it), ``ring link: NV ...; ...`` and the slowest pair after it."""
    slowest, ring = info["slowest_link"], info.get("ring_link", info["slowest_link"])
    pair = ""  # the slowest pair where the ring avoids it
    if ring != slowest:
        pair = f"; slowest pair {slowest}, off the ring NCCL builds over faster links"
    if ring is None and len(topology.gpus) < 2:
        return f"{len(topology.gpus)} GPU: no GPU-to-GPU link to judge"
    if ring is None:
        return "no GPU-to-GPU link class recognised in this matrix"
    link, preset, bandwidth = str(ring), "no preset", "unknown (pass --gpu to name the GPU)"
    if any(g.model for g in topology.gpus):  # named: a figure the matrix cannot give
        bandwidth = "unknown (the matrix's links do not fit the GPU named: see the warnings)"
    if ring == "NV" and topology.nvlinks_per_gpu() == 0:  # a GPU's row not read: no count
        bandwidth = "unknown (a GPU's NVLinks are not in the matrix: see the warnings)"
    if ring == "NV":
        via = [
            str(g)
            for g in ("NVSwitch" if topology.nvswitch else None, info["nvlink_generation"])
            if g
        ]
        link += f" ({', '.join(via)})" if via else ""
    if info["preset"]:
        preset = f"preset {info['preset']}"
    part = topology.part()
    if ring != "NV" and part is not None and not part.device.p2p_pcie:
        preset += (
            f" (P2P over PCIe is disabled by the driver on the {part.device.name}: NCCL copies "
            "through host memory)"
        )
    if info["expected_busbw_gbs"]:  # with what it is made of and its citation; as every
        # sentence says a bandwidth (the collectives verdict, advise): 3 significant digits
        source = f" ({info['expected_source']})" if info.get("expected_source") else ""
        bandwidth = f"{number(info['expected_busbw_gbs'])} GB/s{source}"
    said = "ring link" if pair else "slowest link"
    return f"{said}: {link} -> {preset}; expected all-reduce bus bandwidth {bandwidth}{pair}"
