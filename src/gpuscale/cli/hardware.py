"""Commands on the user's interconnect: collectives and topo."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuscale.cli.bench import world_sizes
from gpuscale.cli.common import app, err, fail, out, require_torch
from gpuscale.cli_output import Format, print_frame


@app.command()
def collectives(
    out_file: Annotated[Path, typer.Option("--out", help="Results file (JSONL, appended).")] = Path(
        "collectives.jsonl"
    ),
    nproc: Annotated[str | None, typer.Option(help="Processes (one per device).")] = None,
    backend: Annotated[str, typer.Option(help="auto, nccl or gloo.")] = "auto",
    max_bytes: Annotated[str, typer.Option(help="Largest message, e.g. 1G, 64M.")] = "1G",
    ops: Annotated[
        str, typer.Option(help="Comma-separated collectives.")
    ] = "all_reduce,all_gather,reduce_scatter",
    interconnect: Annotated[
        str | None,
        typer.Option(help="Link preset to judge against (default: from the detected topology)."),
    ] = None,
    gap_ms: Annotated[
        float,
        typer.Option(
            min=0.0,
            help="Compute this many ms between timed calls, as training does between "
            "all-reduces (0: back to back, as nccl-tests).",
        ),
    ] = 0.0,
    load: Annotated[
        bool,
        typer.Option(
            "--load",
            help="CPU processes: keep a compute thread busy on every rank while the calls "
            "are timed, as backward does beside DDP's all-reduce (calibrates advice for "
            "CPU devices); ignored on GPUs.",
        ),
    ] = False,
) -> None:
    """All-reduce / all-gather / reduce-scatter sweep, 8 B to --max-bytes, nccl-tests style."""
    import subprocess

    require_torch("the collectives sweep")
    from gpuscale.bench.collectives import judge_busbw, load_collectives
    from gpuscale.bench.runner import torchrun_command
    from gpuscale.units import parse_bytes

    world = max(world_sizes(nproc))
    try:
        size = parse_bytes(max_bytes)
    except ValueError as exc:
        fail(str(exc))
    command = [
        *torchrun_command(world, "gpuscale.bench.collectives"),
        "--out",
        str(out_file),
        "--backend",
        backend,
        "--ops",
        ops,
        "--max-bytes",
        str(size),
        "--gap-ms",
        str(gap_ms),
        *(["--load"] if load else []),
    ]
    with err.status(f"sweeping {ops} on {world} processes up to {size:,} bytes"):
        done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        fail("the collectives run failed: " + " | ".join(tail))
    table, topology = load_collectives(out_file)
    if table.empty:
        fail(f"no successful measurement in {out_file}")
    latest = table[table["ranks"] == world]
    print_frame(
        out,
        latest[["op", "bytes", "time_us", "algbw_gbs", "busbw_gbs"]],
        Format.table,
        title=f"collectives on {world} ranks ({latest['backend'].iloc[0]})",
    )
    preset = interconnect or (
        (topology or {}).get("preset") if latest["device"].iloc[0] == "cuda" else None
    )
    for op, group in latest.groupby("op"):
        _, sentence = judge_busbw(float(group["busbw_gbs"].max()), preset)
        out.print(f"{op}: {sentence}", markup=False, highlight=False)


@app.command()
def topo(
    saved: Annotated[
        Path | None,
        typer.Option("--file", help="Parse a saved `nvidia-smi topo -m` output instead of NVML."),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """GPU-to-GPU links (NV#, PIX, PXB, PHB, NODE, SYS) and the NCCL/torch/CUDA versions."""
    import json
    import os

    from gpuscale.bench.topology import nvml_topology, parse_topo_matrix

    if saved:
        try:
            info = parse_topo_matrix(saved.read_text(errors="replace")).to_dict()
        except (OSError, ValueError) as exc:
            fail(f"{saved}: {exc}")
    else:
        info = nvml_topology() or {
            "error": "no NVML (no NVIDIA driver or GPU); use --file "
            "with a saved `nvidia-smi topo -m`"
        }
    try:
        import torch

        versions = {
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "nccl": ".".join(map(str, torch.cuda.nccl.version()))
            if torch.cuda.is_available()
            else None,
        }
    except ImportError:
        versions = {"torch": None}
    info["versions"] = versions
    info["nccl_env"] = {k: v for k, v in os.environ.items() if k.startswith("NCCL_")}
    if fmt is Format.json or "matrix" not in info:
        out.file.write(json.dumps(info, indent=2) + "\n")
        return
    import pandas as pd

    frame = pd.DataFrame(info["matrix"], columns=info["gpus"])
    frame.insert(0, "", info["gpus"])
    print_frame(out, frame, fmt, title="GPU topology (nvidia-smi topo -m legend)")
    out.print(
        f"slowest link: {info['slowest_link']} -> interconnect preset {info['preset']}; "
        f"versions: {versions}",
        markup=False,
        highlight=False,
    )
