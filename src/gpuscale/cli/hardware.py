"""Commands on the user's hardware: bench, collectives, topo."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import typer

from gpuscale.cli.common import (
    app,
    err,
    fail,
    out,
    print_bench,
)
from gpuscale.cli_output import Format, print_frame


def _world_sizes(text: str | None) -> tuple[int, ...]:
    """``1,2,4`` -> (1, 2, 4); default: 1, 2, 4, ... up to every device (GPUs, else 2 CPU
    processes at most per core pair)."""
    if text:
        try:
            return tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
        except ValueError:
            fail(f"--nproc takes whole numbers like 1,2,4, not {text!r}")
    import os

    try:
        import torch

        devices = torch.cuda.device_count() or min(2, os.cpu_count() or 1)
    except ImportError:
        devices = 1
    sizes, n = [], 1
    while n < devices:
        sizes.append(n)
        n *= 2
    return (*sizes, devices)


@app.command()
def bench(
    out_file: Annotated[Path, typer.Option("--out", help="Results file (JSONL, appended).")] = Path(
        "results.jsonl"
    ),
    models: Annotated[
        str | None,
        typer.Option("--models", help="Comma-separated ladder models (see --list); default: all."),
    ] = None,
    max_params: Annotated[str | None, typer.Option(help="Largest model, e.g. 2M.")] = None,
    min_params: Annotated[str | None, typer.Option(help="Smallest model, e.g. 1M.")] = None,
    nproc: Annotated[
        str | None,
        typer.Option(help="World sizes, e.g. 1,2,4 (default: 1, 2, 4, ... all devices)."),
    ] = None,
    backend: Annotated[str, typer.Option(help="auto, nccl (GPUs) or gloo (CPU).")] = "auto",
    steps: Annotated[int, typer.Option(help="Timed steps per run.")] = 20,
    warmup: Annotated[int, typer.Option(help="Warm-up steps, not timed.")] = 3,
    batch: Annotated[
        int | None,
        typer.Option(help="Per-device batch (weak scaling); default 32 on GPU, 8 on CPU."),
    ] = None,
    strong: Annotated[
        bool,
        typer.Option("--strong", help="Strong scaling: fixed --global-batch split over devices."),
    ] = False,
    global_batch: Annotated[int, typer.Option(help="Global batch for --strong.")] = 64,
    precision: Annotated[str, typer.Option(help="fp32, bf16 or fp16 (autocast).")] = "fp32",
    bucket_mb: Annotated[float, typer.Option(help="DDP bucket size, MB.")] = 25.0,
    timeout: Annotated[float, typer.Option(help="Seconds a model may run.")] = 600.0,
    resume: Annotated[bool, typer.Option(help="Skip configurations already in --out.")] = False,
    threads: Annotated[
        int, typer.Option(help="CPU threads per process (default: cores / processes).")
    ] = 0,
    list_models: Annotated[bool, typer.Option("--list", help="List the ladder.")] = False,
) -> None:
    """Measure DDP training-step scaling on this machine (torchrun, one process per device)."""
    try:
        from gpuscale.bench.models import parse_size, select_models
    except ImportError:
        fail("the benchmark needs PyTorch: pip install 'gpuscale[bench]'")
    from rich.progress import Progress, SpinnerColumn, TimeElapsedColumn

    from gpuscale.bench.results import bench_table, read_results
    from gpuscale.bench.runner import SweepConfig, run_sweep

    try:
        chosen = select_models(
            models.split(",") if models else None,
            parse_size(max_params) if max_params else None,
            parse_size(min_params) if min_params else None,
        )
    except ValueError as exc:
        fail(str(exc))
    if list_models:
        import pandas as pd

        print_frame(
            out,
            pd.DataFrame([{"model": s.name, "family": s.family, "params": n} for s, n in chosen]),
            Format.table,
            title="model ladder",
        )
        return
    try:
        cfg = SweepConfig(
            models=tuple(s.name for s, _ in chosen),
            nproc=_world_sizes(nproc),
            out=out_file,
            backend=backend,
            steps=steps,
            warmup=warmup,
            batch=batch,
            scaling="strong" if strong else "weak",
            global_batch=global_batch,
            precision=precision,
            bucket_mb=bucket_mb,
            timeout_s=timeout,
            resume=resume,
            threads=threads,
        )
    except ValueError as exc:
        fail(str(exc))
    total = len(cfg.models) * len(cfg.nproc)
    with Progress(
        SpinnerColumn(),
        "[progress.description]{task.description}",
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    ) as progress:
        task = progress.add_task(f"{total} configurations", total=total)

        def on_event(message: str) -> None:
            progress.update(task, description=message)
            if not message.startswith("started"):
                progress.advance(task)

        report = run_sweep(cfg, {s.name: n for s, n in chosen}, on_event=on_event)
    records, problems = read_results(out_file) if out_file.exists() else ([], [])
    for problem in problems:
        err.print(problem, markup=False, highlight=False)
    print_bench(bench_table(records))
    err.print(
        f"{report.appended} rows appended to {out_file}, {report.skipped} skipped "
        f"(--resume), {len(report.failures)} failed",
        markup=False,
        highlight=False,
    )
    if report.interrupted:
        err.print("interrupted: the rows above are saved")
        raise typer.Exit(130)


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

    from gpuscale.bench.collectives import judge_busbw, load_collectives
    from gpuscale.bench.models import parse_size
    from gpuscale.bench.runner import torchrun_command

    world = max(_world_sizes(nproc))
    try:
        size = int(parse_size(re.sub(r"(?i)i?b$", "", max_bytes.strip()) or max_bytes))
    except ValueError as exc:
        fail(str(exc))
    size = 1 << (size.bit_length() - 1) if size & (size - 1) else size
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
