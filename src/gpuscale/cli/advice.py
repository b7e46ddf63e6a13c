"""The advise command: how many devices, with what batch, and why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpuscale.advice.request import AdviceRequest
from gpuscale.bench.telemetry import topology_here
from gpuscale.cli.common import (
    FormatOption,
    app,
    fail,
    note,
    out,
    read_bench,
    refused,
)
from gpuscale.cli.options import command, option_names, request_of
from gpuscale.cli.output import Format, jsonable, print_frame, print_json
from gpuscale.names import UnknownNameError, resolve_ruleset, resolve_workloads
from gpuscale.quantities import number
from gpuscale.tables import DEFAULT_EFFICIENCY_THRESHOLD
from gpuscale.tables.requests import FieldError

# The prediction columns a terminal shows (JSON and CSV carry them all).
TABLE_COLUMNS = [
    "accelerators",
    "batch_per_device",
    "accum",
    "global_batch",
    "step_ms",
    "compute_ms",
    "exposed_comm_ms",
    "samples_per_s",
    "time_to_train_min",
    "speedup",
    "speedup_low",
    "speedup_high",
    "efficiency",
    "throughput_efficiency",
    "convergence_factor",
    "accelerator_hours",
    "cost",
    "energy_kwh",
]


@command(app, "advise", AdviceRequest, at="fmt")
def advise_command(fmt: FormatOption = Format.table, **options: Any) -> None:
    """How many devices to train on, with what batch, and why.

    Time, cost and energy to a trained model from your measurements (or numbers) and a
    convergence model (method: docs/advice.md)."""
    from gpuscale.advice.api import advise  # lazy: pandas (the advice model), not for --help
    from gpuscale.advice.load import load_advice_data  # lazy: pandas, as the line above

    try:  # the names every command resolves alike: `bret` gets "did you mean 'bert'?"
        options["ruleset"] = resolve_ruleset(options["ruleset"])
        if options.get("workload") is not None:
            options["workload"] = resolve_workloads([options["workload"]])[0]
    except UnknownNameError as exc:
        fail(str(exc))
    try:
        request = request_of(AdviceRequest, options)
        topology = None
        given = (request.interconnect, request.busbw_gbs, request.topo, request.collectives)
        if all(value is None for value in given):
            topology = topology_here(None, None)
        bench = read_bench(Path(request.bench)) if request.bench else None
        data = load_advice_data(request, bench=bench, topology=topology)
        result = advise(
            request, bench=data.bench, topology=data.topology, collectives=data.collectives
        )
    except FieldError as exc:
        fail(refused(exc, option_names(AdviceRequest)))
    except (ValueError, KeyError, OSError) as exc:
        fail(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc))
    render(result, fmt)


def _scaling(inputs: Any) -> dict[str, Any]:
    """How the counts were compared, and the fixed per-step cost behind it."""
    fixed = inputs.fixed
    kept = inputs.kept_global_batch
    return {
        "kind": "strong"
        if kept is not None
        else ("weak" if inputs.convergence is None or inputs.scaling == "weak" else "search"),
        "global_batch_kept": kept,
        "fixed_cost": None
        if fixed is None
        else {
            "ms": fixed.ms,
            "low_ms": fixed.low_ms,
            "high_ms": fixed.high_ms,
            "source": fixed.source,
            "basis": fixed.basis,
            "measure": fixed.measure,
        },
    }


def render(result: Any, fmt: Format) -> None:
    """The table and the sentences, or JSON (the Decision's fields), or CSV."""
    frame = result.predictions
    if fmt is Format.json:
        d = result.decision
        doc = {
            "recommendation": {
                "devices": d.devices,
                "fastest": d.fastest,
                "efficient": result.efficient,
                "cheapest": result.cheapest,
                "equilibrium": result.equilibrium,
                "break_even_compute_ms_per_grad_mb": result.break_even_ms_per_mb,
                "break_even_params": result.break_even_params,
                "target_efficiency_params": result.target_params,
                "dominant_term": d.dominant_term,
                "speedup_capped_by": d.cap,
                "warnings": list(d.warnings),
                "measure_first": d.settle,
                "caveats": list(result.caveats),
            },
            "decision": d.to_dict(),
            "scaling": _scaling(result.inputs),
            "assumptions": [a.to_dict() for a in result.inputs.assumptions],
            "explanation": result.explanation,
            "predictions": frame.to_dict("records"),
            "weak_scaling": None
            if result.alternative is None
            else result.alternative.to_dict("records"),
        }
        print_json(out, jsonable(doc))
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
    if fmt is Format.csv:  # data only on stdout: what qualifies the numbers, on stderr
        for line in result.caveats:
            note(line)
    if fmt is Format.table:
        for line in result.explanation:
            out.print(f"- {line}", markup=False, highlight=False)
        eq = {k: "none" if v is None else v for k, v in result.equilibrium.items()}
        threshold = result.inputs.threshold if result.inputs else DEFAULT_EFFICIENCY_THRESHOLD
        out.print(
            f"- Equilibrium: knee {eq['knee']}, speed x efficiency "
            f"{eq['max_speed_x_efficiency']}, efficiency >= {threshold:g} x best "
            f"{eq['efficiency_threshold']}.",
            markup=False,
            highlight=False,
        )
