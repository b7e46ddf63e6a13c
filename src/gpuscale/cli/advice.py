"""The advise command: predicted scaling and a recommendation."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gpuscale.cli.common import (
    app,
    fail,
    out,
    read_bench,
)
from gpuscale.cli_output import Format, print_frame


@app.command()
def advise(
    bench_file: Annotated[
        Path | None,
        typer.Option(
            "--bench", help="Calibrate from `gpuscale bench` results (compute at N = 1, overlap)."
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            help="Model of --bench to advise on (default: the largest with an N = 1 run)."
        ),
    ] = None,
    params: Annotated[
        str | None, typer.Option(help="Parameters, e.g. 7M (without --bench).")
    ] = None,
    step_ms: Annotated[
        float | None, typer.Option(help="Measured single-device step time, ms (without --bench).")
    ] = None,
    batch: Annotated[int, typer.Option(help="Per-device batch of that step.")] = 32,
    interconnect: Annotated[
        str | None,
        typer.Option(
            help="Link preset (see gpuscale/interconnect/reference.py), e.g. pcie-phb, nvlink4."
        ),
    ] = None,
    busbw_gbs: Annotated[float | None, typer.Option(help="Bus bandwidth, GB/s.")] = None,
    latency_us: Annotated[float | None, typer.Option(help="Per-step latency, us.")] = None,
    collectives_file: Annotated[
        Path | None,
        typer.Option(
            "--collectives", help="Calibrate the link from `gpuscale collectives` results."
        ),
    ] = None,
    nodes: Annotated[int, typer.Option(help="Nodes (two-level network when > 1).")] = 1,
    gpus_per_node: Annotated[int, typer.Option(help="Devices per node.")] = 8,
    inter_node: Annotated[str, typer.Option(help="Link preset between nodes.")] = "ib-ndr400",
    max_devices: Annotated[
        int | None,
        typer.Option(help="Largest device count to predict (default: nodes x gpus-per-node)."),
    ] = None,
    overlap: Annotated[
        float | None,
        typer.Option(help="Share of the all-reduce backward hides (default: measured, else 0.5)."),
    ] = None,
    precision_bytes: Annotated[
        int, typer.Option("--grad-bytes", help="Bytes per gradient element (4 fp32, 2 bf16).")
    ] = 4,
    target_efficiency: Annotated[float, typer.Option(help="Efficiency to keep.")] = 0.7,
    price: Annotated[
        float | None, typer.Option(help="Price per device-hour (without it, no cost column).")
    ] = None,
    power_w: Annotated[
        float | None,
        typer.Option(help="Device power, W (default: NVML from --bench, else the TDP table)."),
    ] = None,
    samples: Annotated[float, typer.Option(help="Samples to train (time, cost, energy).")] = 1e7,
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """Predict step time on 1..N devices and recommend how many to use, and why."""
    import json

    from gpuscale.advise.calibrate import (
        CalibrationError,
        compute_from_bench,
        link_from_collectives,
        overlap_or_default,
    )
    from gpuscale.advise.model import Compute, Link
    from gpuscale.advise.recommend import DEFAULT_OVERLAP, TDP_W, AdviceInputs
    from gpuscale.advise.recommend import advise as run_advice
    from gpuscale.interconnect.reference import get_preset
    from gpuscale.units import parse_size

    try:
        if collectives_file:
            link = link_from_collectives(collectives_file)
        elif busbw_gbs is not None:
            link = Link(busbw_gbs=busbw_gbs, latency_us=latency_us or 10.0, name="custom")
        else:
            preset = get_preset(interconnect or "pcie-phb")
            link = Link(
                busbw_gbs=preset.busbw_gbs,
                latency_us=latency_us or preset.latency_us,
                name=preset.name,
            )
        measured_power = None
        if bench_file:
            table = read_bench(bench_file)
            ok1 = table[(table["status"] == "ok") & (table["accelerators"] == 1)]
            chosen = model or (ok1.sort_values("params")["model"].iloc[-1] if len(ok1) else "")
            compute, n_params, measured_power = compute_from_bench(table, chosen)
            calibrated_overlap = overlap_or_default(table, chosen, link)
        else:
            if params is None or step_ms is None:
                fail("give --bench results.jsonl, or --params and --step-ms (and --batch)")
            n_params = parse_size(params)
            # Without a breakdown: backward ~ 2/3 of a step (2x the forward), optimizer small.
            compute = Compute(
                forward_ms=step_ms * 0.3,
                backward_ms=step_ms * 0.6,
                optimizer_ms=step_ms * 0.1,
                batch=batch,
            )
            calibrated_overlap = DEFAULT_OVERLAP
        inter = get_preset(inter_node) if nodes > 1 else None
        inputs = AdviceInputs(
            params=n_params,
            compute=compute,
            link=link,
            max_devices=max_devices or nodes * gpus_per_node,
            per_node=gpus_per_node if nodes > 1 else None,
            inter=Link(busbw_gbs=inter.busbw_gbs, latency_us=inter.latency_us, name=inter.name)
            if inter
            else None,
            bytes_per_grad=precision_bytes,
            overlap=overlap if overlap is not None else calibrated_overlap,
            target_efficiency=target_efficiency,
            price_per_device_hour=price,
            power_w=power_w or measured_power or TDP_W["H100"],
            samples=samples,
        )
        result = run_advice(inputs)
    except (ValueError, KeyError, CalibrationError) as exc:
        fail(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc))
    if fmt is Format.json:
        from gpuscale.cli_output import jsonable

        doc = {
            "inputs": {
                "params": n_params,
                "link": link.name,
                "busbw_gbs": link.busbw_gbs,
                "latency_us": link.latency_us,
                "overlap": inputs.overlap,
                "grad_bytes": inputs.grad_bytes,
                "power_w": inputs.power_w,
            },
            "recommendation": {
                "fastest": result.fastest,
                "efficient": result.efficient,
                "equilibrium": result.equilibrium,
                "break_even_params": result.break_even_params,
                "target_efficiency_params": result.target_params,
                "dominant_term": result.dominant_term,
            },
            "explanation": result.explanation,
            "predictions": result.predictions.to_dict("records"),
        }
        out.file.write(json.dumps(jsonable(doc), indent=2) + "\n")
        return
    print_frame(
        out,
        result.predictions,
        fmt,
        title=f"predicted DDP scaling, {n_params / 1e6:.3g}M parameters on {link.name} "
        f"(overlap {inputs.overlap:.2f})",
    )
    if fmt is Format.table:
        for line in result.explanation:
            out.print(f"- {line}", markup=False, highlight=False)
        eq = {k: "none" if v is None else v for k, v in result.equilibrium.items()}
        knee = "none (no bend in the curve)" if eq["knee"] == "none" else eq["knee"]
        out.print(
            f"- Equilibrium: knee {knee}, speed x "
            f"efficiency {eq['max_speed_x_efficiency']}, E' >= 0.8 x best "
            f"{eq['efficiency_threshold']}.",
            markup=False,
            highlight=False,
        )
