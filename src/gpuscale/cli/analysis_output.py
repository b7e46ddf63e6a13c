"""``analyze``'s terminal output: each workload's table (compacted to the terminal),
its equilibrium picks and each family's."""

from __future__ import annotations

from gpuscale.cli.common import columns_of, out
from gpuscale.cli.output import Format, print_frame

DECOMPOSE_COLUMNS = [
    "global_batch_size",
    "throughput_factor",
    "convergence_factor",
    "throughput_efficiency",
    "samples_to_converge",
    "expected_samples_to_converge",
]
ANALYZE_COLUMNS = [
    "submitter",
    "system_name",
    "accelerator_family",
    "accelerators",
    "time_to_train_min",
    "speedup",
    "efficiency",
    "normalized_efficiency",
    "superlinear",
    "gpu_hours",
    "cluster",
    "pareto",
]


# What a narrow terminal drops first from analyze's table (the asked-for --decompose
# columns late); CSV and JSON always carry every column.
ANALYZE_DROP_ORDER = [
    "cluster",
    "pareto",
    "gpu_hours",
    "efficiency",
    "submitter",
    "expected_samples_to_converge",
    "samples_to_converge",
    "global_batch_size",
    "superlinear",
    "speedup",
    "system_id",
]


def print_analysis(
    results: list, reference: str, decompose_columns: bool, columns_asked: str | None
) -> None:
    """Print each ``WorkloadAnalysis`` as a table with its picks (the terminal format)."""
    from gpuscale.analysis.answers import CROSS_FAMILY, overall_equilibrium, per_family_reference
    from gpuscale.quantities import named

    fmt = Format.table
    for result in results:
        refs = ", ".join(
            f"{r.submitter}/{r.system_id} ({r.accelerators} x "
            f"{r.accelerator_family}, {r.time_to_train_min:.2f} min)"
            for r in result.references
        )
        columns = ANALYZE_COLUMNS + (DECOMPOSE_COLUMNS if decompose_columns else [])
        if result.table.duplicated(["submitter", "system_name", "accelerators"]).any():
            columns = [*columns[:2], "system_id", *columns[2:]]  # else two rows look alike
        columns = columns_of(columns_asked, columns, list(result.table.columns))
        print_frame(
            out,
            result.table[columns],
            fmt,
            title=f"{result.round} {result.workload}: reference ({reference}) {refs}",
            drop_order=[] if columns_asked else ANALYZE_DROP_ORDER,
        )
        eq = overall_equilibrium(result)
        if per_family_reference(result):
            out.print(
                f"  over all systems: knee only; speed x efficiency and E' threshold "
                f"{CROSS_FAMILY} (see within each family below)",
                markup=False,
                highlight=False,
            )
        for pick in eq.picks:
            out.print(
                f"  {pick.label}: {named(pick.submitter, pick.system_name)} "
                f"({pick.accelerators} x {pick.accelerator_family}, "
                f"{pick.time_to_train_min:.2f} min, E' {pick.normalized_efficiency:.2f})",
                markup=False,
                highlight=False,
            )
        out.print(
            f"  agreement: {eq.agreement}; Pareto front: {len(eq.pareto)} systems",
            markup=False,
            highlight=False,
        )
        for family in result.by_family:  # like with like: each family's own picks
            picks = ", ".join(f"{p.label} {p.accelerators:,}" for p in family.picks)
            if picks:
                out.print(f"  within {family.scope}: {picks}", markup=False, highlight=False)
        out.print()
