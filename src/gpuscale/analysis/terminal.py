"""``analyze``'s terminal views: each workload's table (its picks and flagged counts
in words under it) and the study compared, as :class:`~gpuscale.tables.views.TableView`
and lines the CLI draws."""

from __future__ import annotations

import pandas as pd

from gpuscale.analysis.analyze import (
    AnalysisOptions,
    WorkloadAnalysis,
    equilibrium_sentences,
    references_text,
    study_statements,
)
from gpuscale.analysis.document import SUMMARY_FIELDS
from gpuscale.analysis.study import CITATION
from gpuscale.analysis.study_table import table_i_statements
from gpuscale.quantities import named
from gpuscale.tables import display_name
from gpuscale.tables.views import TableView

DECOMPOSE_COLUMNS = (
    "global_batch_size",
    "throughput_factor",
    "convergence_factor",
    "throughput_efficiency",
    "samples_to_converge",
    "expected_samples_to_converge",
    "convergence_unit",
)

# What a narrow terminal drops first from analyze's table (the asked-for --decompose
# columns late); CSV and JSON always carry every column.
ANALYZE_DROP_ORDER = (
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
)


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


def workload_view(
    result: WorkloadAnalysis, options: AnalysisOptions, *, decompose: bool
) -> TableView:
    """A workload's table (its summary columns, ``--decompose``'s too), its picks and
    flagged counts in words under it."""
    columns = [*SUMMARY_FIELDS, *(DECOMPOSE_COLUMNS if decompose else ())]
    if result.table.duplicated(["submitter", "system_name", "accelerators"]).any():
        columns = [*columns[:2], "system_id", *columns[2:]]  # else two rows look alike
    said = [*equilibrium_sentences(result), *flagged_sentences(result.table)]
    return TableView(
        result.table,
        columns,
        f"{result.round} {result.workload}: reference ({options.reference}) "
        f"{references_text(result)}",
        ANALYZE_DROP_ORDER,
        said=(*(f"  {line}" for line in said), ""),
    )


def study_lines(
    results: list[WorkloadAnalysis], options: AnalysisOptions, scores: pd.DataFrame | None
) -> list[str]:
    """The study compared with the data, and (for v4.1 ``scores``) its Table I, for the
    workloads analysed."""
    statements = study_statements(results, options)
    if not statements:
        return []
    lines = [f"Compared with the study ({CITATION}):"]
    lines += [f"  {st.workload}, {st.verdict}: {st.text}" for st in statements]
    analysed = {r.workload for r in results}
    for line in table_i_statements(scores) if scores is not None else []:
        if any(line.startswith(display_name(w)) for w in analysed):
            lines.append(f"  Table I, {line}")
    return lines


def every_result_view(results: list[WorkloadAnalysis]) -> TableView:
    """Every workload's scaling table stacked, every column (``analyze -f csv``)."""
    frame = pd.concat([r.table for r in results])
    return TableView(frame=frame, shown=list(frame.columns))
