"""Commands on the user's interconnect: collectives (an nccl-tests style sweep and its
verdict) and topo (the GPU topology)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from gpuscale.cli.bench import world_sizes
from gpuscale.cli.common import app, err, fail, out, require_torch
from gpuscale.cli_output import Format, print_frame
from gpuscale.formatting import number

OPS_HELP = "all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, send_recv"


def detect_topology(topo_file: Path | None, gpu: str | None):
    """The topology from a saved ``nvidia-smi topo -m``, else NVML, else None."""
    from gpuscale.interconnect.nvml import TopologyError, nvml_topology, visible_uuids
    from gpuscale.interconnect.topology import parse_topo_matrix

    if topo_file is not None:
        try:
            return parse_topo_matrix(topo_file.read_text(errors="replace"), gpu)
        except (OSError, ValueError) as exc:
            fail(f"{topo_file}: {exc}")
    try:
        return nvml_topology(visible_uuids=visible_uuids())
    except TopologyError:
        return None


@app.command()
def collectives(
    out_file: Annotated[Path, typer.Option("--out", help="Results file (JSONL, appended).")] = Path(
        "collectives.jsonl"
    ),
    nproc: Annotated[str | None, typer.Option(help="Processes (one per device).")] = None,
    backend: Annotated[str, typer.Option(help="auto, nccl or gloo.")] = "auto",
    min_bytes: Annotated[str, typer.Option(help="Smallest message (nccl-tests -b).")] = "8",
    max_bytes: Annotated[
        str | None,
        typer.Option(
            help="Largest message (nccl-tests -e): K, M, G are binary (1G = 2^30 B, as "
            "nccl-tests), KiB/MiB/GiB too, KB/MB/GB decimal; default 1G on GPUs, 64M on CPU."
        ),
    ] = None,
    ops: Annotated[str, typer.Option(help=f"Comma-separated: {OPS_HELP}.")] = "all_reduce",
    iters: Annotated[int, typer.Option(min=1, help="Timed calls per size (nccl-tests -n).")] = 20,
    warmup: Annotated[int, typer.Option(min=0, help="Warm-up calls (nccl-tests -w).")] = 5,
    check: Annotated[
        bool, typer.Option("--check/--no-check", help="Check every result (nccl-tests -c).")
    ] = True,
    interconnect: Annotated[
        str | None,
        typer.Option(help="Link preset to judge against (default: from the detected topology)."),
    ] = None,
    topo_file: Annotated[
        Path | None, typer.Option(help="A saved `nvidia-smi topo -m` to judge against.")
    ] = None,
    gpu: Annotated[str | None, typer.Option(help="GPU model, e.g. A100 (for --topo-file).")] = None,
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
    """Collectives sweep as nccl-tests runs it, and whether the interconnect is healthy."""
    import json
    import subprocess
    from datetime import datetime, timezone

    require_torch("the collectives sweep")
    from gpuscale.bench.collectives import OPS
    from gpuscale.bench.runner import device_kind, torchrun_command
    from gpuscale.interconnect.nccl import check_env, parse_debug_log
    from gpuscale.interconnect.records import read_sweeps
    from gpuscale.interconnect.reference import PRESETS
    from gpuscale.interconnect.verdict import judge
    from gpuscale.units import format_bytes, parse_bytes

    unknown = set(ops.split(",")) - set(OPS)
    if unknown:
        fail(f"unknown collective(s) {', '.join(sorted(unknown))}; known: {OPS_HELP}")
    if interconnect and interconnect not in PRESETS:
        fail(f"unknown interconnect {interconnect!r}; known: {', '.join(PRESETS)}")
    device = device_kind(backend)
    try:
        low = parse_bytes(min_bytes)
        high = parse_bytes(max_bytes or ("1G" if device == "cuda" else "64M"))
    except ValueError as exc:
        fail(str(exc))
    if low > high:
        fail(f"--min-bytes {format_bytes(low)} is above --max-bytes {format_bytes(high)}")
    world = max(world_sizes(nproc))
    sweep_id = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    command = [
        *torchrun_command(world, "gpuscale.bench.collectives"),
        *("--out", str(out_file), "--backend", backend, "--ops", ops),
        *("--min-bytes", str(low), "--max-bytes", str(high), "--sweep-id", sweep_id),
        *("--iters", str(iters), "--warmup", str(warmup), "--gap-ms", str(gap_ms)),
        *([] if check else ["--no-check"]),
        *(["--load"] if load else []),
    ]
    env = {**os.environ}
    if device == "cuda" and "NCCL_DEBUG" not in env:
        env["NCCL_DEBUG"] = "INFO"  # what NCCL chose goes into the sweep's record
    with err.status(f"{ops} on {world} processes, {format_bytes(low)} to {format_bytes(high)}"):
        done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        tail = [x for x in (done.stderr or done.stdout).strip().splitlines() if x.strip()][-3:]
        fail("the collectives run failed: " + " | ".join(tail))
    nccl = parse_debug_log(done.stdout + done.stderr)
    if nccl.version or nccl.transports:
        with out_file.open("a", encoding="utf-8") as handle:
            record = {"schema": "gpuscale.collectives/2", "kind": "nccl", "sweep_id": sweep_id}
            handle.write(json.dumps({**record, "nccl": nccl.to_dict()}) + "\n")
    sweeps = read_sweeps(out_file)
    latest = sweeps.of(sweep_id)
    if latest.empty:
        fail(f"no measurement of sweep {sweep_id} in {out_file}")
    _print_sweep(latest)
    topology = detect_topology(topo_file, gpu) if device == "cuda" or topo_file else None
    for finding in check_env(env, nvlink=bool(topology and topology.slowest_link() == "NV")):
        out.print(f"NCCL setting: {finding.message}", markup=False, highlight=False)
    for verdict in judge(sweeps, topology=topology, preset=interconnect, env=env):
        out.print(verdict.sentence(), markup=False, highlight=False)


def _print_sweep(latest) -> None:
    """One nccl-tests style table per collective (sizes down, placements across)."""
    from gpuscale.units import format_bytes

    failed = latest[latest["status"] != "ok"]
    for row in failed.itertuples(index=False):
        reason = row.error if isinstance(row.error, str) else "out of memory on a rank"
        out.print(f"{row.op}: {row.status} ({reason})", markup=False, highlight=False)
    ok = latest[latest["status"] == "ok"].copy()
    for op, group in ok.groupby("op", sort=False):
        frame = group.assign(size=group["size_bytes"].map(format_bytes))[
            [
                "size",
                "size_bytes",
                "placement",
                "time_us",
                "time_us_p99",
                "algbw_gbs",
                "busbw_gbs",
                "wrong",
            ]
        ]
        ranks = int(group["ranks"].iloc[0])
        print_frame(
            out,
            frame,
            Format.table,
            title=f"{op} on {ranks} ranks (sweep {group['sweep_id'].iloc[0]})",
        )


@app.command()
def topo(
    saved: Annotated[
        Path | None,
        typer.Option("--file", help="Parse a saved `nvidia-smi topo -m` output instead of NVML."),
    ] = None,
    gpu: Annotated[
        str | None, typer.Option(help="GPU model for --file (tells the NVLink generation).")
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """GPU-to-GPU links (NV#, PIX, PXB, PHB, NODE, SYS), NICs, and the expected bandwidth."""
    import json

    from gpuscale.interconnect.nccl import check_env

    topology = detect_topology(saved, gpu)
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
        out.file.write(json.dumps(info, indent=2) + "\n")
        return
    import pandas as pd

    names = [g.name for g in topology.gpus]
    frame = pd.DataFrame(topology.matrix(), columns=names)
    frame.insert(0, "", names)
    frame["CPU affinity"] = [g.cpu_affinity for g in topology.gpus]
    frame["NUMA"] = [g.numa_node for g in topology.gpus]
    for nic in topology.nics:
        frame[nic.name] = list(nic.to_gpus) + [""] * (len(names) - len(nic.to_gpus))
    print_frame(out, frame, fmt, title=f"GPU topology ({topology.source})")
    for nic in topology.nics:
        rate = f", {nic.rate_gbit:g} Gb/s" if nic.rate_gbit else ""
        out.print(f"{nic.name}: {nic.device}{rate}", markup=False, highlight=False)
    expected = info["expected_busbw_gbs"]
    out.print(
        f"slowest link: {info['slowest_link']}"
        + (
            f" ({'NVSwitch, ' if topology.nvswitch else ''}{info['nvlink_generation']})"
            if info["slowest_link"] == "NV"
            else ""
        )
        + f" -> preset {info['preset']}; expected all-reduce bus bandwidth "
        + (f"{number(expected, 4)} GB/s" if expected else "unknown (pass --gpu to name the GPU)"),
        markup=False,
        highlight=False,
    )
    for line in info.get("downtrained", []) + info.get("nccl_checks", []):
        out.print(line, markup=False, highlight=False)
