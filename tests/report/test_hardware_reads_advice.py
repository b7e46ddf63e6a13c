"""The report's "your hardware" parts and its advice are views of one record of the runs
the advice reads (``BenchSection.read``): on a file of two sweeps of one configuration
(2 steps, then 30, the 30-step run on 2 devices flagged), the advice rests on the flagged
30-step run, and the hardware answer and the summary name that run, flagged and used,
never the outlasted 2-step run as what was measured there."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from gpuscale.advice.api import Advice
from gpuscale.advice.request import AdviceRequest
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.results import bench_table, read_results
from gpuscale.report.bench_advice import advice_on_bench
from gpuscale.report.bench_answer import outlasted
from gpuscale.report.bench_checks import ReadRun
from gpuscale.report.bench_section import BenchSection, build_bench_section
from gpuscale.report.bench_words import bench_summary
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record

TESTS = Path(__file__).parents[1]
TWO_SWEEPS = TESTS / "advice" / "cpu_mlp_two_sweeps_gloo.jsonl"


def _section(table: pd.DataFrame, out: Path, **asked: object) -> tuple[BenchSection, Advice]:
    advice = advice_on_bench(table, AdviceRequest(**asked))
    assert advice.advice is not None, advice.refused
    section = build_bench_section(table, FigureFiles(out), advice=advice)
    assert section is not None
    return section, advice.advice


def _said(run: ReadRun) -> str:
    """How the report says a run's speedup (``bench_answer.measured_speedup``)."""
    return f"{run.configuration} {run.speedup:.2f}x on {run.accelerators}"


@pytest.fixture(scope="module")
def two_sweeps(tmp_path_factory: pytest.TempPathFactory) -> tuple[BenchSection, Advice]:
    table = bench_table(read_results(TWO_SWEEPS)[0])
    return _section(table, tmp_path_factory.mktemp("two"))


def test_the_read_record_is_the_advices_flagged_measurement(two_sweeps) -> None:
    section, advice = two_sweeps
    (run,) = section.read
    assert (run.configuration, run.accelerators) == ("mlp-0.2m (30 steps)", 2)
    assert run.flagged and run.read and run.use
    # the advice's own record of that count: the same run, resting on flagged runs alone
    (measured,) = advice.calibration.runs.measured
    assert (measured.devices, measured.flagged) == (run.accelerators, True)
    assert run.speedup == pytest.approx(measured.speedup)
    (count,) = advice.disagreements
    assert count.accelerators == run.accelerators and count.on_flagged_only
    assert count.measured_speedup == pytest.approx(run.speedup)


def test_the_hardware_answer_names_the_run_the_advice_rests_on(two_sweeps) -> None:
    section, _ = two_sweeps
    (run,) = section.read
    hardware = [line for line in section.answer if line.startswith("Your hardware")]
    (own,) = hardware
    assert _said(run) in own  # its speedup, as the advice's lines give it
    assert run.use in own  # and how the advice uses it
    assert "no measured answer" not in own
    # the outlasted 2-step run is never the answer of what the advice is on
    assert "(2 steps) 0.04x" not in own


def test_the_summary_names_the_runs_the_advice_reads(two_sweeps) -> None:
    section, _ = two_sweeps
    (run,) = section.read
    scaling = bench_scaling(bench_table(read_results(TWO_SWEEPS)[0]))
    base = bench_summary(scaling)
    # the trusted runs' line names the flagged run it leaves out
    assert f"{run.configuration} on {run.accelerators}" in base[0]
    # and one line more, the advice's reading: the run read, flagged and used, and
    # the configurations outlasted by it (``rows.longest``), which it does not read
    assert section.summary[: len(base)] == base
    (reads,) = section.summary[len(base) :]
    assert section.findings[: len(section.summary)] == section.summary
    assert f"{run.configuration} on {run.accelerators}, {run.use}" in reads
    shorter = scaling.loc[outlasted(scaling), "configuration"].unique()
    assert list(shorter) == ["mlp-0.2m (2 steps)"]
    assert all(f"not {name}" in reads for name in shorter)


def test_a_clean_file_reads_every_run_and_adds_no_summary_line(tmp_path: Path) -> None:
    table = bench_table(
        [
            bench_record("m", 10**6, n, rate, comm_ms=2.0, sync_overhead_ms=1.0 * (n > 1))
            for n, rate in ((1, 100.0), (2, 150.0))
        ]
    )
    section, advice = _section(table, tmp_path, interconnect="pcie-phb")
    scaling = bench_scaling(table)
    assert section.read and not any(r.flagged for r in section.read)
    assert all(r.read for r in section.read)
    # the summary is the findings' own, unchanged: nothing flagged, nothing outlasted
    assert section.summary == bench_summary(scaling)
    assert not outlasted(scaling).any()
    measured = advice.calibration.runs.measured
    assert [(r.accelerators, r.flagged) for r in section.read] == [
        (m.devices, m.flagged) for m in measured
    ]
    assert [r.speedup for r in section.read] == pytest.approx([m.speedup for m in measured])
    (own,) = [line for line in section.answer if line.startswith("Your hardware")]
    assert all(_said(r) in own for r in section.read)
