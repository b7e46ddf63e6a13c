"""``analyze``'s terminal output: each workload's table (compacted to the terminal),
its equilibrium picks and each family's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuscale.cli.common import columns_of, out
from gpuscale.cli.output import Format, print_frame
from gpuscale.quantities import named
from gpuscale.tables import display_name

if TYPE_CHECKING:  # pandas and the analysis stack only when analyzing
    import pandas as pd

    from gpuscale.analysis import AnalysisOptions

DECOMPOSE_COLUMNS = [
    "global_batch_size",
    "throughput_factor",
    "convergence_factor",
    "throughput_efficiency",
    "samples_to_converge",
    "expected_samples_to_converge",
    "convergence_unit",
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
    results: list,
    decompose_columns: bool,
    columns_asked: str | None,
    options: AnalysisOptions,
    scores: pd.DataFrame | None = None,
) -> None:
    """Print each ``WorkloadAnalysis`` as a table with its picks (the terminal format),
    then the study's findings against the data and, for v4.1 ``scores``, its Table I."""
    # lazy: pandas (the analysis stack), not needed for --help
    from gpuscale.analysis.analyze import (
        equilibrium_sentences,
        references_text,
        study_statements,
    )

    # lazy: the analysis stack (pandas), not needed for --help
    from gpuscale.analysis.document import SUMMARY_FIELDS

    # lazy: the analysis stack (pandas), not needed for --help
    from gpuscale.analysis.study import CITATION

    # lazy: the analysis stack (pandas), not needed for --help
    from gpuscale.analysis.study_table import table_i_statements

    for result in results:
        columns = [*SUMMARY_FIELDS, *(DECOMPOSE_COLUMNS if decompose_columns else [])]
        if result.table.duplicated(["submitter", "system_name", "accelerators"]).any():
            columns = [*columns[:2], "system_id", *columns[2:]]  # else two rows look alike
        columns = columns_of(columns_asked, columns, list(result.table.columns))
        print_frame(
            out,
            result.table[columns],
            Format.table,
            title=f"{result.round} {result.workload}: reference ({options.reference}) "
            f"{references_text(result)}",
            drop_order=[] if columns_asked else ANALYZE_DROP_ORDER,
        )
        for line in [*equilibrium_sentences(result), *flagged_sentences(result.table)]:
            out.print(f"  {line}", markup=False, highlight=False)
        out.print()
    statements = study_statements(results, options)
    if statements:
        out.print(f"Compared with the study ({CITATION}):", markup=False, highlight=False)
        for st in statements:
            out.print(f"  {st.workload}, {st.verdict}: {st.text}", markup=False, highlight=False)
        analysed = {r.workload for r in results}
        for line in table_i_statements(scores) if scores is not None else []:
            if any(line.startswith(display_name(w)) for w in analysed):
                out.print(f"  Table I, {line}", markup=False, highlight=False)


def flagged_sentences(table: pd.DataFrame) -> list[str]:
    """One line per system whose samples to converge is flagged as impossible."""
    if "samples_to_converge_flag" not in table:
        return []
    flagged = table[table["samples_to_converge_flag"].fillna("") != ""]
    return [
        f"samples to converge of {named(r.submitter, r.system_name)} not used: "
        f"{r.samples_to_converge_flag}"
        for r in flagged.itertuples(index=False)
    ]
