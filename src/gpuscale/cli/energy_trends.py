"""Commands across rounds: energy to train from the power logs, trends between rounds."""

from __future__ import annotations

from typing import Annotated

import typer

from gpuscale.cli.common import (
    Benchmarks,
    Columns,
    Families,
    FormatOption,
    RoundNames,
    RoundPaths,
    app,
    columns_of,
    err,
    fail,
    families_of,
    load_tables,
    note,
    out,
    workloads_of,
)
from gpuscale.cli.output import Format, print_frame
from gpuscale.tables import TREND_COLUMNS

ENERGY_COLUMNS = [
    "round",
    "benchmark",
    "submitter",
    "system_name",
    "accelerator_family",
    "accelerators",
    "time_to_train_min",
    "energy_kj",
    "energy_per_sample_j",
    "energy_per_accelerator_hour_kj",
    "compute_share",
]

# What a narrow terminal drops first (CSV and JSON keep every column).
ENERGY_DROP_ORDER = ["compute_share", "energy_per_accelerator_hour_kj", "submitter", "round"]
TREND_DROP_ORDER = ["benchmark_folder", "systems", "common_accelerators", "best_time_at_common_min"]


@app.command()
def energy(
    paths: RoundPaths = None,
    round_names: RoundNames = None,
    benchmark: Benchmarks = None,
    fmt: FormatOption = Format.table,
    columns_asked: Columns = None,
) -> None:
    """Energy to train from MLPerf power logs (official rule), per sample and accelerator-hour."""
    # lazy: pandas, not needed for --help
    from gpuscale.analysis.energy_per_result import (
        energy_scale_sentences,
        energy_table,
        no_energy_reason,
    )

    tables = load_tables(paths, round_names)
    workloads = workloads_of(tables, benchmark)
    every = energy_table(tables)
    frame = every[every["workload"].isin(workloads)] if len(every) else every
    if frame.empty:
        err.print(no_energy_reason(tables, every, workloads), markup=False, highlight=False)
        if fmt is not Format.table:  # still one valid document: [] or a header line
            import pandas as pd  # lazy: pandas, not needed for --help

            print_frame(out, pd.DataFrame(columns=ENERGY_COLUMNS), fmt)
        return
    print_frame(
        out,
        frame[columns_of(columns_asked, ENERGY_COLUMNS, list(frame.columns))],
        fmt,
        title="energy to train (official rule)",
        drop_order=[] if columns_asked else ENERGY_DROP_ORDER,
    )
    if fmt is Format.table:  # energy against scale in words, where counts differ
        for line in energy_scale_sentences(frame):
            out.print(line, markup=False, highlight=False)


@app.command()
def trends(
    paths: RoundPaths = None,
    round_names: RoundNames = None,
    benchmark: Benchmarks = None,
    family: Families = None,
    republished: Annotated[
        bool,
        typer.Option(
            "--republished",
            help="Also count results republished in a later round (same runs) there.",
        ),
    ] = False,
    fmt: FormatOption = Format.table,
    columns_asked: Columns = None,
) -> None:
    """How each benchmark moved across rounds: best times, E' at scale, equilibrium."""
    # lazy: pandas (the analysis and MLPerf stacks), not needed for --help
    from gpuscale.analysis.trends import trends as run_trends
    from gpuscale.mlperf.benchmarks import first_rounds, last_rounds

    tables = load_tables(paths, round_names)
    frame = run_trends(
        tables.scores,
        workloads_of(tables, benchmark) if benchmark else None,
        republished=republished,
        first_rounds=first_rounds(),
        last_rounds=last_rounds(),
    )
    left_out = frame.attrs.get("republished_left_out", 0)
    if left_out:
        note(
            f"{left_out} result(s) republished in a later round (same runs) are counted "
            "once, in the first round showing them; --republished counts them in every round"
        )
    families = families_of(tables, family)
    if families:
        frame = frame[frame["accelerator_family"].isin(families)]
    if frame.empty:
        fail("no scored results for these options")
    shown = columns_of(columns_asked, list(TREND_COLUMNS), list(frame.columns))
    print_frame(
        out,
        frame[shown],
        fmt,
        title="trends across rounds",
        drop_order=[] if columns_asked else TREND_DROP_ORDER,
    )
