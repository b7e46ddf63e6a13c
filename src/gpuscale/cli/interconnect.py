"""Commands on the user's interconnect: collectives (an nccl-tests style sweep and its
verdict) and topo (the GPU topology)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from gpuscale.cli.bench import world_sizes
from gpuscale.cli.common import FormatOption, app, err, fail, out, require_torch
from gpuscale.cli.output import Format, print_frame
from gpuscale.formatting import number

OPS_HELP = "all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, send_recv"


def detect_topology(topo_file: Path | None, gpu: str | None):
    """The topology from a saved ``nvidia-smi topo -m``, else NVML (the GPUs torch sees),
    else None; a file that cannot be read ends the command with its reason."""
    from gpuscale.bench.telemetry import visible_uuids  # torch: only when NVML is asked
    from gpuscale.interconnect.nvml import detect_topology as detect

    try:
        return detect(topo_file, gpu, None if topo_file else visible_uuids())
    except ValueError as exc:
        fail(str(exc))


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
    from gpuscale.bench.results import ResultsError, check_writable
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
    try:  # before torchrun starts: its own failure would only say "error_file: <N/A>"
        check_writable(out_file)
    except ResultsError as exc:
        fail(str(exc))
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
    """One nccl-tests style table per collective: size, count, type, redop, root, time,
    algbw (GB/s) and busbw (GB/s) with two decimals, #wrong."""
    import pandas as pd

    from gpuscale.units import format_bytes

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
    matrix = pd.DataFrame(topology.matrix(), columns=names)
    matrix.insert(0, "gpu", names)
    affinity = pd.DataFrame(
        {
            "gpu": names,
            "cpu_affinity": [g.cpu_affinity for g in topology.gpus],
            "numa_node": [g.numa_node for g in topology.gpus],
        }
    )
    nics = pd.DataFrame(
        [
            [n.name, n.device, *n.to_gpus, *[""] * (len(names) - len(n.to_gpus))]
            for n in topology.nics
        ],
        columns=["nic", "device", *names],
    )
    if fmt is Format.csv:  # one table, every column named: a row per GPU
        wide = matrix.merge(affinity, on="gpu")
        for nic in topology.nics:
            wide[nic.name] = list(nic.to_gpus) + [""] * (len(names) - len(nic.to_gpus))
        print_frame(out, wide, fmt)
    else:  # the matrix as a matrix, then the NICs against the GPUs, then affinities
        print_frame(out, matrix, fmt, title=f"GPU topology ({topology.source})")
        if len(nics):
            print_frame(out, nics, fmt, title="NICs to GPUs")
        if (affinity[["cpu_affinity", "numa_node"]] != "").any().any():
            print_frame(out, affinity, fmt, title="CPU and NUMA affinity")
    notes = out if fmt is Format.table else err  # machine formats: data only on stdout
    for line in [
        _link_sentence(topology, info),
        *info.get("downtrained", []),
        *info.get("nccl_checks", []),
    ]:
        notes.print(line, markup=False, highlight=False)


def _link_sentence(topology, info: dict) -> str:
    """``slowest link: NV (NVSwitch, nvlink4) -> preset nvlink4; expected ...``, or why
    there is no link to judge."""
    if info["slowest_link"] is None:
        return (
            f"{len(topology.gpus)} GPU: no GPU-to-GPU link to judge"
            if len(topology.gpus) < 2
            else "no GPU-to-GPU link class recognised in this matrix"
        )
    expected = info["expected_busbw_gbs"]
    kind = (
        f" ({'NVSwitch, ' if topology.nvswitch else ''}{info['nvlink_generation']})"
        if info["slowest_link"] == "NV"
        else ""
    )
    preset = f"preset {info['preset']}" if info["preset"] else "no preset"
    bandwidth = (
        f"{number(expected, 4)} GB/s" if expected else "unknown (pass --gpu to name the GPU)"
    )
    return (
        f"slowest link: {info['slowest_link']}{kind} -> {preset}; expected all-reduce "
        f"bus bandwidth {bandwidth}"
    )
