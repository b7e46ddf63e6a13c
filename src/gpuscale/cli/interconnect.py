"""Commands on the user's interconnect: collectives (an nccl-tests style sweep and its
verdict) and topo (the GPU topology)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuscale.bench.collectives_config import CollectivesConfig
from gpuscale.bench.telemetry import topology_here
from gpuscale.cli.common import (
    FormatOption,
    app,
    err,
    fail,
    fail_on,
    out,
    require_torch,
)
from gpuscale.cli.options import command, request_of
from gpuscale.cli.output import Format, print_frame, print_json
from gpuscale.interconnect.nccl import check_env
from gpuscale.interconnect.topology import link_sentence
from gpuscale.quantities import format_bytes


@command(app, "collectives", CollectivesConfig, at="interconnect")
def collectives(
    out_file: Annotated[Path, typer.Option("--out", help="Results file (JSONL, appended).")] = Path(
        "collectives.jsonl"
    ),
    nproc: Annotated[str | None, typer.Option(help="Processes (one per device).")] = None,
    interconnect: Annotated[
        str | None,
        typer.Option(help="Link preset to judge against (default: from the detected topology)."),
    ] = None,
    topo_file: Annotated[
        Path | None, typer.Option(help="A saved `nvidia-smi topo -m` to judge against.")
    ] = None,
    gpu: Annotated[str | None, typer.Option(help="GPU model, e.g. A100 (for --topo-file).")] = None,
    **options: Any,
) -> None:
    """Collectives sweep as nccl-tests runs it, and whether the interconnect is healthy."""
    require_torch("the collectives sweep")
    # lazy: numpy and the torchrun sweep, only the measuring commands need them
    from gpuscale.bench.collectives_sweep import SweepError, check_interconnect
    from gpuscale.bench.runner import world_sizes

    with fail_on(ValueError):
        config = request_of(CollectivesConfig, options)
        world = max(world_sizes(nproc))
    with fail_on(SweepError, ValueError), err.status(f"{options['ops']} on {world} processes"):
        check = check_interconnect(
            config, out_file, world, topo_file=topo_file, gpu=gpu, preset=interconnect
        )
    _print_sweep(check.run.latest)
    for line in [*(f"NCCL setting: {s}" for s in check.settings), *check.verdicts]:
        out.print(line, markup=False, highlight=False)


def _print_sweep(latest) -> None:
    """One nccl-tests style table per collective: size, count, type, redop, root, time,
    algbw (GB/s) and busbw (GB/s) with two decimals, #wrong."""
    import pandas as pd  # lazy: pandas, not needed for --help

    failed = latest[latest["status"] != "ok"]
    for row in failed.itertuples(index=False):
        reason = row.error if isinstance(row.error, str) else "out of memory on a rank"
        out.print(f"{row.op}: {row.status} ({reason})", markup=False, highlight=False)
    ok = latest[latest["status"] == "ok"].copy()
    for op, group in ok.groupby("op", sort=False):
        frame = pd.DataFrame(
            {
                "size": group["size_bytes"].map(format_bytes),
                "size (B)": group["size_bytes"].astype("Int64"),
                "count (elements)": group["count"].astype("Int64"),
                "type": group["dtype"].fillna("float32"),
                "redop": group["redop"].fillna("sum"),
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
        print_frame(
            out,
            frame,
            Format.table,
            title=f"{op} on {ranks} ranks (sweep {group['sweep_id'].iloc[0]})",
            formats=dict.fromkeys(SWEEP_TWO_DECIMALS, ".2f"),
        )


# nccl-tests prints times and bandwidths with two decimals
SWEEP_TWO_DECIMALS = ("time (us)", "p99 (us)", "algbw (GB/s)", "busbw (GB/s)")


@app.command()
def topo(
    saved: Annotated[
        Path | None,
        typer.Option("--file", help="Parse a saved `nvidia-smi topo -m` output instead of NVML."),
    ] = None,
    gpu: Annotated[
        str | None, typer.Option(help="GPU model for --file (tells the NVLink generation).")
    ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """GPU-to-GPU links (NV#, PIX, PXB, PHB, NODE, SYS), NICs, and the expected bandwidth."""
    with fail_on(ValueError):
        topology = topology_here(saved, gpu)
    if topology is None:
        fail(
            "no NVML here (no NVIDIA driver or GPU, or nvidia-ml-py missing); pass --file "
            "with a saved `nvidia-smi topo -m`"
        )
    info = topology.to_dict()
    if saved is None:  # this machine's: its versions and settings belong with it
        info["nccl_env"] = {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}
        info["nccl_checks"] = [c.message for c in check_env(info["nccl_env"])]
    if fmt is Format.json:
        print_json(out, info)
        return
    _print_topology(topology, fmt)
    notes = out if fmt is Format.table else err  # machine formats: data only on stdout
    for line in [
        link_sentence(topology, info),
        *info.get("downtrained", []),
        *info.get("nccl_checks", []),
    ]:
        notes.print(line, markup=False, highlight=False)


def _print_topology(topology, fmt: Format) -> None:
    """The GPU matrix, the NICs against the GPUs and the CPU/NUMA affinities as three
    tables (the terminal), or one CSV table with a row per GPU and every column named."""
    import pandas as pd  # lazy: pandas, not needed for --help

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
    if fmt is Format.csv:  # one table, every column named: a row per GPU
        wide = matrix.merge(affinity, on="gpu")
        for nic in topology.nics:
            wide[nic.name] = list(nic.to_gpus) + [""] * (len(names) - len(nic.to_gpus))
        print_frame(out, wide, fmt)
        return
    nics = pd.DataFrame(
        [
            [n.name, n.device, *n.to_gpus, *[""] * (len(names) - len(n.to_gpus))]
            for n in topology.nics
        ],
        columns=["nic", "device", *names],
    )
    # the matrix as a matrix, then the NICs against the GPUs, then affinities
    print_frame(out, matrix, fmt, title=f"GPU topology ({topology.source})")
    if len(nics):
        print_frame(out, nics, fmt, title="NICs to GPUs")
    if (affinity[["cpu_affinity", "numa_node"]] != "").any().any():
        print_frame(out, affinity, fmt, title="CPU and NUMA affinity")
