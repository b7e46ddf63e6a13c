"""``analyze --bench``'s answer: the break-even first (``bench_sentences.bench_headline``),
then a short table (each run's throughput, speedup and efficiency, its evidence) and the
runs' caveats counted; every column and sentence is ``--explain``'s (``bench_view``),
every field ``-f csv``'s and ``-f json``'s."""

from __future__ import annotations

from dataclasses import dataclass, replace

import pandas as pd

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.analysis.bench_sentences import (
    baseline_sentence,
    bench_document,
    bench_headline,
    trouble_lines,
)
from gpuscale.analysis.bench_view import bench_view, none_ok, results_title, shown_columns
from gpuscale.quantities import of_the
from gpuscale.tables.views import TableView

# The answer's columns (those a table of these runs has: ``shown_columns``), in order.
ANSWER_SHOWN = (
    "configuration",
    "platform",
    "params",
    "accelerators",
    "nnodes",  # where a run spanned machines
    "samples_per_s",
    "baseline_samples_per_s",  # what the speedup is against: a reader can divide
    "speedup",
    "efficiency",
    "speedup_fsdp",
    "flagged",
    "evidence",
)
ANSWER_DROP_ORDER = ("platform", "params", "speedup_fsdp", "flagged")

# Where the rest of a bench table is, said last under the answer.
EXPLAIN_BENCH = (
    "Every column, what the speedups are against and why each run is weak or flagged: "
    "--explain; every field: -f csv or -f json."
)


def bench_answer_view(table: pd.DataFrame) -> TableView:
    """The answer of a bench table: its break-even (``headline``), each ok run's rate,
    speedup, efficiency and evidence, the flagged and failed runs said one a line (a
    number not to use, a run to redo), the weak ones counted, and on CPU what the
    speedup does not answer (``baseline_sentence``)."""
    scaling = bench_scaling(table)
    failed = table[table["status"] != "ok"]
    kept = {*shown_columns(scaling), "baseline_samples_per_s"}
    shown = [c for c in ANSWER_SHOWN if c in kept]
    said = trouble_lines(scaling, failed)
    weak = int((~scaling["flagged"] & (scaling["evidence"] == "weak")).sum())
    if weak:
        said.append(f"weak evidence: {of_the(weak, len(scaling), 'run')}")  # all 3, not 3 of 3
    if baseline := baseline_sentence(scaling):  # what a CPU speedup does not answer
        said.append(baseline)
    empty = ""
    if scaling.empty:
        empty = none_ok(failed)
    else:
        said.append(EXPLAIN_BENCH)
    return TableView(
        scaling,
        shown,
        results_title("bench", scaling, failed),
        ANSWER_DROP_ORDER,
        said=tuple(said),
        empty=empty,
        headline=bench_headline(scaling),
    )


@dataclass(frozen=True, slots=True)
class BenchAnalysed:
    """``analyze --bench`` of a results table: ``view``, what the terminal or CSV shows
    (the answer, or every column and note) and, with a ``document``, ``-f json``'s whole
    document of the bench alone; ``document``: the bench's part of that document (None
    unless asked); ``measured``: whether any run measured (none: a file of failed runs,
    the command exits 1 after saying why, as ``bench`` does)."""

    view: TableView
    document: dict[str, object] | None
    measured: bool


def analyze_bench(table: pd.DataFrame, *, answer: bool, document: bool) -> BenchAnalysed:
    """A bench table as ``analyze --bench`` gives it: its answer (:func:`bench_answer_view`)
    where ``answer``, else the whole table (``bench_view``), and with ``document`` its part
    of ``analyze -f json`` (``bench_sentences.bench_document``)."""
    from gpuscale.analysis.document import analyze_document  # lazy: the rounds' analysis

    part = bench_document(table) if document else None
    if answer:
        view = bench_answer_view(table)
    else:  # -f json of the bench alone: the same document, no round beside it
        whole = None if part is None else analyze_document(None, part)
        view = replace(bench_view(table), document=whole)
    return BenchAnalysed(view, part, bool((table["status"] == "ok").any()))
