"""A flagged (not trusted) bench run is never called strong evidence: a new-user walk's
report showed a busy machine's tf-1.5m run with Evidence "strong" beside "Not trusted
because: machine busy: other processes used 81%"; the column "DDP vs bare module" said
"below 1" of a value of 1.01; and "1 of the 1 run are weak evidence"."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

import gpuscale
from gpuscale.advice.explain.as_json import advice_document
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.analysis.bench_sentences import BASIS_CLAUSES
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.report.bench_evidence import evidence_column, grade_sentence, run_grade
from gpuscale.report.bench_section import build_bench_section
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record

BUSY = "machine busy: other processes used 81% of the CPU time while it ran"


def _one(steps: int, *, plain_ms: float, flags: list[str]) -> pd.DataFrame:
    """One N = 1 run of ``steps`` timed steps of 70 ms (a timed phase long enough to
    measure the busy share: no weak reason but what ``steps`` gives), the bare module's
    step ``plain_ms``, with ``flags``."""
    config = BenchConfig(steps=steps, batch=8)
    record = bench_record(
        "tf-1.5m", 1_500_000, 1, 114.0, config=config, forward_ms=20, backward_ms=40,
        optimizer_ms=10, plain_step_ms=plain_ms, flags=flags,
    )  # fmt: skip
    record["host"] = {"other_load_share": 0.81 if flags else 0.0, "steal_share": 0.0}
    return bench_table([record])


def test_a_flagged_run_is_never_strong_evidence(tmp_path: Path) -> None:
    trusted, flagged = _one(400, plain_ms=69.0, flags=[]), _one(400, plain_ms=69.0, flags=[BUSY])
    # the premise: the same run unflagged is strong evidence; flagged, the table says so
    assert list(bench_scaling(trusted)["evidence"]) == ["strong"]
    scaling = bench_scaling(flagged)  # analyze --bench's table and JSON rows
    assert bool(scaling["flagged"].iloc[0])
    assert "strong" not in set(flagged["evidence"]) | set(scaling["evidence"])
    # the report: its Evidence column and a sentence on the run
    assert not evidence_column(scaling).str.contains("strong").any()
    assert "strong" not in run_grade(scaling, scaling)
    section = build_bench_section(flagged, FigureFiles(tmp_path))
    assert section is not None
    (row,) = section.rows
    assert row["Not trusted because"] and "strong" not in row["Evidence"]
    assert "not trusted" in row["Evidence"]
    # the advice, told to use the flagged run: its terms are not firm evidence
    result = gpuscale.advise(bench=flagged, allow_flagged=True)
    assert advice_document(result)["recommendation"]["terms_evidence"] == "flagged"


def test_ddp_vs_bare_above_1_is_said_as_noise(tmp_path: Path) -> None:
    """The column's description and the sentence on it are true of a value above 1."""
    table = _one(400, plain_ms=70.7, flags=[])
    ratio = float(bench_scaling(table)["ddp_vs_bare"].iloc[0])
    assert 1 < ratio < 1.05  # the premise: DDP's step within noise of the bare one
    assert "above 1 by noise" in BASIS_CLAUSES["ddp_vs_bare"]
    section = build_bench_section(table, FigureFiles(tmp_path))
    assert section is not None
    (said,) = [f for f in section.findings if "DDP's step reaches" in f]
    assert "above 1, as here, by noise alone" in said


def test_one_weak_run_of_one_is_said_as_the_run() -> None:
    """ "1 of the 1 run are weak evidence" read "the run is weak evidence"."""
    scaling = bench_scaling(_one(2, plain_ms=69.0, flags=[]))
    assert list(scaling["evidence"]) == ["weak"]  # the premise: 2 steps timed
    said = grade_sentence(scaling, scaling)
    assert said is not None
    assert "the run is weak evidence" in said and "1 of the 1" not in said
