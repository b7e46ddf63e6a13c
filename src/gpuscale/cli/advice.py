"""The advise command: how many devices, with what batch, and why."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path
from typing import Annotated, Any

import typer

from gpuscale.advice.request import HELP, OPTION_NAMES, PATHS, SIZES, AdviceRequest
from gpuscale.cli.common import (
    FormatOption,
    app,
    fail,
    note,
    out,
    parse_option,
    read_bench,
    refused,
)
from gpuscale.cli.interconnect import detect_topology
from gpuscale.cli.output import Format, jsonable, print_frame, print_json
from gpuscale.names import UnknownNameError, resolve_ruleset, resolve_workloads
from gpuscale.quantities import format_count, number, parse_size
from gpuscale.tables import DEFAULT_EFFICIENCY_THRESHOLD
from gpuscale.tables.requests import FieldError

# Options given once or several times (a step time at each of several batches).
REPEATED = {"step_ms": float, "batch": int}

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


def _options() -> list[inspect.Parameter]:
    """One Typer option per field of :class:`AdviceRequest` (its default and help), and
    ``--format``: the options are never written a second time."""
    params = []
    hints = typing.get_type_hints(AdviceRequest)
    for f in dataclasses.fields(AdviceRequest):
        hint = hints[f.name]
        if f.name in REPEATED:  # a value, or several (step times at several batches)
            hint = list[REPEATED[f.name]] | None  # type: ignore[valid-type]
        elif f.name in SIZES:
            hint = str | None
        elif f.name in PATHS:
            hint = Path | None
        default = f.default
        if f.name in SIZES and default is not None:
            default = format_count(default)
            hint = str
        option = typer.Option(
            *([OPTION_NAMES[f.name]] if f.name in OPTION_NAMES else []), help=HELP[f.name]
        )
        params.append(
            inspect.Parameter(
                f.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=Annotated[hint, option],
            )
        )
    params.append(
        inspect.Parameter(
            "fmt", inspect.Parameter.KEYWORD_ONLY, default=Format.table, annotation=FormatOption
        )
    )
    return params


def advise_command(**options: Any) -> None:
    """How many devices to train on, with what batch, and why.

    Time, cost and energy to a trained model from your measurements (or numbers) and a
    convergence model (method: docs/advice.md)."""
    from gpuscale.advice.api import advise  # lazy: pandas (the advice model), not for --help
    from gpuscale.advice.load import load_advice_data  # lazy: pandas, as the line above

    fmt = options.pop("fmt")
    try:  # the names every command resolves alike: `bret` gets "did you mean 'bert'?"
        options["ruleset"] = resolve_ruleset(options["ruleset"])
        if options.get("workload") is not None:
            options["workload"] = resolve_workloads([options["workload"]])[0]
    except UnknownNameError as exc:
        fail(str(exc))
    try:
        fields = {
            name: parse_option(name, value, parse_size)
            if name in SIZES and value is not None
            else str(value)
            if name in PATHS and value is not None
            else (tuple(value) or None)
            if name in REPEATED and value is not None
            else value
            for name, value in options.items()
        }
        request = AdviceRequest(**fields)
        topology = None
        given = (request.interconnect, request.busbw_gbs, request.topo, request.collectives)
        if all(value is None for value in given):
            topology = detect_topology(None, None)
        bench = read_bench(Path(request.bench)) if request.bench else None
        data = load_advice_data(request, bench=bench, topology=topology)
        result = advise(
            request, bench=data.bench, topology=data.topology, collectives=data.collectives
        )
    except FieldError as exc:
        fail(refused(exc, OPTION_NAMES))
    except (ValueError, KeyError, OSError) as exc:
        fail(str(exc.args[0]) if isinstance(exc, KeyError) else str(exc))
    render(result, fmt)


advise_command.__signature__ = inspect.Signature(_options())  # type: ignore[attr-defined]
app.command("advise")(advise_command)


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
