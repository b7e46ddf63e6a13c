"""The report's section comparing the data with the study's findings, in words computed
from the tables (``gpuscale.analysis.study`` and ``study_table``)."""

from __future__ import annotations

from gpuscale.analysis.analyze import AnalysisOptions, WorkloadAnalysis, study_statements
from gpuscale.analysis.study_findings import CITATION
from gpuscale.analysis.study_table import STUDY_ROUND, table_i_statements
from gpuscale.report.rounds_section import ExtraSection
from gpuscale.tables import RoundTables, display_name


def study_section(
    tables: RoundTables, results: list[WorkloadAnalysis], options: AnalysisOptions
) -> ExtraSection | None:
    """Where the data agrees with the study and where it does not, per workload, and its
    Table I beside gpuscale's numbers; None without any of the study's workloads."""
    statements = study_statements(results, options)
    if not statements:
        return None
    findings = [
        f"Compared with {CITATION}, each finding tested within the accelerator "
        "family that ran the most counts, against its own reference (like with like)."
    ]
    findings += [
        f"{display_name(s.workload)} ({s.round}), {s.verdict}: {s.text}" for s in statements
    ]
    analysed = {display_name(r.workload) for r in results if r.round == STUDY_ROUND}
    findings += [
        f"Table I, {line}"
        for line in table_i_statements(tables.scores)
        if line.split(":")[0] in analysed
    ]
    return ExtraSection("study", "The study compared", findings, [])
