"""``gpuscale plan``: time to train on N devices of an accelerator, from MLPerf."""

from __future__ import annotations

from typing import Annotated

import typer

from gpuscale.cli.common import RoundNames, RoundPaths, app, err, fail, fail_on, load_tables, out
from gpuscale.cli.output import Format, jsonable, print_json, print_records
from gpuscale.planning.request import HELP, PlanRequest
from gpuscale.tables import DEFAULT_EFFICIENCY_THRESHOLD
from gpuscale.tables.plan import PLAN_COLUMNS

# The table format shows these; CSV and JSON every column.
SHOWN = [
    c
    for c in PLAN_COLUMNS
    if c not in ("expected_samples", "batch_per_accelerator", "nearest", "pareto", "extrapolated")
]


def _flat(nearest: list[dict]) -> str:
    """One ``nearest`` list as text: ``v4.1 Dell XE9680 (8 devices, 27.8 min); ...``
    (the family named when it is not the one planned)."""
    return "; ".join(
        f"{n['round']} {n['submitter']} {n['system']} ({n['accelerators']} devices, "
        f"{n['time_to_train_min']:.4g} min)"
        for n in nearest
    )


@app.command()
def plan(
    paths: RoundPaths = None,
    round_names: RoundNames = None,
    workload: Annotated[str, typer.Option("--workload", "-w", help=HELP["workload"])] = "",
    accelerator: Annotated[str, typer.Option("--accelerator", "-a", help=HELP["accelerator"])] = "",
    devices: Annotated[str, typer.Option("--devices", "-n", help=HELP["devices"])] = (
        "8,16,32,64,128,256"
    ),
    devices_per_node: Annotated[
        int, typer.Option("--devices-per-node", help=HELP["devices_per_node"])
    ] = 8,
    interconnect: Annotated[
        str | None, typer.Option("--interconnect", help=HELP["interconnect"])
    ] = None,
    price: Annotated[
        float | None, typer.Option("--price", help=HELP["price_per_device_hour"])
    ] = None,
    power: Annotated[float | None, typer.Option("--power", help=HELP["power_w"])] = None,
    threshold: Annotated[
        float, typer.Option("--threshold", help=HELP["threshold"])
    ] = DEFAULT_EFFICIENCY_THRESHOLD,
    fmt: Annotated[Format, typer.Option("--format", "-f")] = Format.table,
) -> None:
    """Time to train on N devices of an accelerator, with an 80% interval, from MLPerf.

    Predicted from the MLPerf results of every family, the accelerator's own level
    (method: docs/plan.md)."""
    from gpuscale.planning import plan_for  # lazy: the fits, not needed for --help

    if not workload or not accelerator:
        fail("give --workload and --accelerator (e.g. --workload bert --accelerator H100)")
    with fail_on(ValueError, options={"power_w": "--power"}):
        request = PlanRequest(
            workload=workload,
            accelerator=accelerator,
            devices=devices,
            devices_per_node=devices_per_node,
            interconnect=interconnect,
            price_per_device_hour=price,
            power_w=power,
            threshold=threshold,
        )
    # the bundled rounds' fits ship with gpuscale: no tables (and no pandas) to load
    scores = load_tables(paths, round_names).scores if paths or round_names else None
    with fail_on(ValueError):  # unknown names, nothing to plan from
        result = plan_for(request, scores)
    rows = [{c: row[c] for c in PLAN_COLUMNS} for row in result.rows]
    if fmt is Format.json:  # the rows with the notes and the model they came from
        doc = {"notes": result.notes, "model": result.model, "rows": rows}
        print_json(out, jsonable(doc))
        return
    if fmt is Format.csv:  # one table on stdout; the notes that qualify it on stderr
        rows = [row | {"nearest": _flat(row["nearest"])} for row in rows]
        print_records(out, rows, fmt)
        _say(result.notes)
        return
    title = f"plan: {result.model['workload']} on {result.model['family']}"
    print_records(out, [{c: row[c] for c in SHOWN} for row in rows], fmt, title=title)
    for row in rows:
        out.print(
            f"{row['accelerators']} devices lean on: {_flat(row['nearest'])}",
            markup=False,
            highlight=False,
        )
    _say(result.notes)


def _say(notes: list[str]) -> None:
    """The plan's notes (law, family borrowed, extrapolation) on stderr."""
    for note in notes:
        err.print(note, markup=False, highlight=False)
