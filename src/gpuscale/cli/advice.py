"""The advise command: how many devices, with what batch, and why."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuscale.cli.common import FormatOption, app, fail, out, read_bench
from gpuscale.cli.output import Format, print_frame
from gpuscale.formatting import number

# The prediction columns a terminal shows (JSON and CSV carry them all).
TABLE_COLUMNS = [
    "devices",
    "batch_per_device",
    "accum",
    "global_batch",
    "step_ms",
    "compute_ms",
    "exposed_comm_ms",
    "samples_per_s",
    "time_to_train_h",
    "speedup",
    "efficiency",
    "throughput_efficiency",
    "convergence_factor",
    "device_hours",
    "cost",
    "energy_kwh",
]


@app.command()
def advise(
    bench_file: Annotated[
        Path | None,
        typer.Option("--bench", help="Calibrate from `gpuscale bench` results (JSONL)."),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(help="Model of --bench to advise on (default: the largest with N = 1)."),
    ] = None,
    params: Annotated[
        str | None, typer.Option(help="Parameters, e.g. 7M (without --bench).")
    ] = None,
    step_ms: Annotated[
        float | None, typer.Option(help="Measured single-device step time, ms (without --bench).")
    ] = None,
    batch: Annotated[
        int | None, typer.Option(help="Largest per-device batch (default: measured, else 32).")
    ] = None,
    flops_per_sample: Annotated[
        str | None,
        typer.Option(help="Forward + backward FLOPs per sample (default 6 x params), e.g. 4G."),
    ] = None,
    interconnect: Annotated[
        str | None,
        typer.Option(help="Link preset, e.g. pcie-phb, nvlink4 (default: detected topology)."),
    ] = None,
    topo_file: Annotated[
        Path | None, typer.Option("--topo", help="Saved `nvidia-smi topo -m` to choose the link.")
    ] = None,
    busbw_gbs: Annotated[
        float | None, typer.Option(help="Custom link: bus bandwidth, GB/s.")
    ] = None,
    latency_us: Annotated[float, typer.Option(help="Custom link: per-step latency, us.")] = 10.0,
    collectives_file: Annotated[
        Path | None,
        typer.Option("--collectives", help="Measured curves from `gpuscale collectives`."),
    ] = None,
    nodes: Annotated[int, typer.Option(min=1, help="Nodes (NICs between them when > 1).")] = 1,
    gpus_per_node: Annotated[int, typer.Option(min=1, help="Devices per node.")] = 8,
    inter_node: Annotated[str, typer.Option(help="NIC preset between nodes.")] = "ib-ndr400",
    nics_per_node: Annotated[
        int | None, typer.Option(min=1, help="NICs per node (default: one per device).")
    ] = None,
    max_devices: Annotated[
        int | None,
        typer.Option(min=1, help="Largest device count (default: nodes x gpus-per-node)."),
    ] = None,
    overlap: Annotated[
        float | None,
        typer.Option(min=0, max=1, help="Share of communication hidden (default: measured)."),
    ] = None,
    precision_bytes: Annotated[
        int, typer.Option("--grad-bytes", help="Bytes per gradient element (4 fp32, 2 bf16).")
    ] = 4,
    bucket_mb: Annotated[float, typer.Option(help="DDP bucket_cap_mb (MiB).")] = 25.0,
    strategy: Annotated[str, typer.Option(help="ddp or fsdp.")] = "ddp",
    noise_scale: Annotated[
        str | None, typer.Option(help="Critical batch B_noise, samples (default: measured).")
    ] = None,
    workload: Annotated[
        str | None, typer.Option(help="Convergence of an MLPerf workload (its RCPs), e.g. bert.")
    ] = None,
    ruleset: Annotated[str, typer.Option(help="MLPerf ruleset of --workload's RCPs.")] = "5.0.0",
    samples: Annotated[
        str, typer.Option(help="Samples to train at the measured batch, e.g. 10M.")
    ] = "10M",
    global_batch: Annotated[
        int | None, typer.Option(min=1, help="Keep this global batch at every N (strong scaling).")
    ] = None,
    target_efficiency: Annotated[
        float, typer.Option(min=0.01, max=1, help="Efficiency to keep.")
    ] = 0.7,
    price: Annotated[
        float | None, typer.Option(help="Price per device-hour (without it, no cost).")
    ] = None,
    power_w: Annotated[
        float | None,
        typer.Option(help="Device power, W (default: measured, else the board table)."),
    ] = None,
    device_name: Annotated[
        str | None, typer.Option(help="Device for the power table (without --bench).")
    ] = None,
    allow_flagged: Annotated[
        bool,
        typer.Option(
            "--allow-flagged",
            help="Use --bench runs flagged as untrustworthy (busy host, noisy steps), "
            "with a warning.",
        ),
    ] = False,
    fmt: FormatOption = Format.table,
) -> None:
    """Recommend how many devices to train on, with what batch, and why: time, cost and
    energy to a trained model from your measurements (or numbers) and a convergence model."""
    import json

    from gpuscale.advice.api import advise as run_advice
    from gpuscale.advice.model import Link
    from gpuscale.names import UnknownNameError, resolve_ruleset, resolve_workloads
    from gpuscale.units import parse_size

    try:  # the names every command resolves alike: `bret` gets "did you mean 'bert'?"
        ruleset = resolve_ruleset(ruleset)
        if workload is not None:
            workload = resolve_workloads([workload])[0]
    except UnknownNameError as exc:
        fail(str(exc))
    try:
        link: str | Link | None = interconnect
        if busbw_gbs is not None:
            link = Link(busbw_gbs=busbw_gbs, latency_us=latency_us, name="custom")
        topology = None
        if link is None and collectives_file is None:
            from gpuscale.cli.interconnect import detect_topology

            topology = detect_topology(topo_file, None)
        result = run_advice(
            bench=read_bench(bench_file) if bench_file else None,
            model=model,
            params=parse_size(params) if params else None,
            step_ms=step_ms,
            batch=batch,
            flops_per_sample=parse_size(flops_per_sample) if flops_per_sample else None,
            link=link,
            collectives=collectives_file,
            topology=topology,
            nodes=nodes,
            gpus_per_node=gpus_per_node,
            inter_node=inter_node,
            nics_per_node=nics_per_node,
            max_devices=max_devices,
            overlap=overlap,
            grad_bytes=precision_bytes,
            bucket_mb=bucket_mb,
            strategy=strategy,
            noise_scale=parse_size(noise_scale) if noise_scale else None,
            workload=workload,
            ruleset=ruleset,
            samples=parse_size(samples),
            global_batch=global_batch,
            target_efficiency=target_efficiency,
            price=price,
            power_w=power_w,
            device_name=device_name,
            allow_flagged=allow_flagged,
        )
    except (ValueError, KeyError, OSError) as exc:
        fail(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc))
    frame = result.predictions
    if fmt is Format.json:
        from gpuscale.cli.output import jsonable

        doc = {
            "recommendation": {
                "devices": result.recommended,
                "fastest": result.fastest,
                "efficient": result.efficient,
                "cheapest": result.cheapest,
                "equilibrium": result.equilibrium,
                "break_even_compute_ms_per_grad_mb": result.break_even_ms_per_mb,
                "break_even_params": result.break_even_params,
                "target_efficiency_params": result.target_params,
                "dominant_term": result.dominant_term,
                "speedup_capped_by": result.cap,
            },
            "explanation": result.explanation,
            "predictions": frame.to_dict("records"),
        }
        out.file.write(json.dumps(jsonable(doc), indent=2) + "\n")
        return
    inputs = result.inputs
    assert inputs is not None
    shown = frame if fmt is not Format.table else frame[TABLE_COLUMNS]
    print_frame(
        out,
        shown,
        fmt,
        title=f"predicted training, {number(inputs.model.params / 1e6)}M parameters on "
        f"{inputs.network.name}",
    )
    if fmt is Format.table:
        for line in result.explanation:
            out.print(f"- {line}", markup=False, highlight=False)
        eq = {k: "none" if v is None else v for k, v in result.equilibrium.items()}
        out.print(
            f"- Equilibrium: knee {eq['knee']}, speed x efficiency "
            f"{eq['max_speed_x_efficiency']}, efficiency >= 0.8 x best "
            f"{eq['efficiency_threshold']}.",
            markup=False,
            highlight=False,
        )
