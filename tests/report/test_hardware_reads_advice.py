"""The report's "your hardware" parts and its advice are views of one record of the runs
the advice reads (``BenchSection.read``): on a file of two sweeps of one configuration
(2 steps, then 30, the 30-step run on 2 devices flagged), the advice rests on the flagged
30-step run, and the hardware answer, the summary, the findings and the figures name
that run, flagged and used, never the outlasted 2-step run as what was measured there."""

from __future__ import annotations

import re
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
from gpuscale.report.bench_figures import predicted_scaling, speedup_by_size
from gpuscale.report.bench_section import OUTLASTED, BenchSection, build_bench_section
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
    # the summary is the findings' own, read as the advice reads the runs: no line more
    assert section.summary == bench_summary(scaling, section.read)
    assert section.findings[: len(section.summary)] == section.summary
    (line,) = section.summary
    assert f"{run.configuration} on {run.accelerators}, {run.use}" in line
    shorter = scaling[outlasted(scaling)]
    assert list(shorter["configuration"].unique()) == ["mlp-0.2m (2 steps)"]
    assert all(f"{r.configuration} on {r.accelerators}" in line for r in shorter.itertuples())
    # without the advice's record the flagged run is left out, never the outlasted one read
    (bare,) = bench_summary(scaling)
    assert f"left out of these findings: {run.configuration} on {run.accelerators}" in bare


def _speedups(lines: list[str]) -> set[str]:
    """Every speedup a line states, as the report writes one (``0.33x``)."""
    return {m for line in lines for m in re.findall(r"\b\d+\.\d\dx\b", line)}


def test_every_speedup_the_section_states_is_the_advices_measured_one(two_sweeps) -> None:
    """The section's findings, its first lines and the answer state, for the model on 2
    devices, the advice's measured speedup (the 30-step run it rests on) and never the
    outlasted 2-step run's."""
    section, advice = two_sweeps
    scaling = bench_scaling(bench_table(read_results(TWO_SWEEPS)[0]))
    (measured,) = advice.calibration.runs.measured
    said = _speedups(section.said)
    assert f"{measured.speedup:.2f}x" in said
    shorter = scaling[outlasted(scaling) & (scaling["accelerators"] > 1)]
    assert len(shorter) == 1
    others = {f"{s:.2f}x" for s in shorter["speedup"]} - {f"{measured.speedup:.2f}x"}
    assert others and not others & said
    # and the table marks the outlasted runs as not read
    evidence = [r["Evidence"] for r in section.rows]
    assert [e.startswith(OUTLASTED) for e in evidence] == outlasted(scaling).tolist()


def test_the_figures_label_the_run_the_advice_rests_on_as_used(two_sweeps, tmp_path) -> None:
    section, _ = two_sweeps
    (run,) = section.read
    scaling = bench_scaling(bench_table(read_results(TWO_SWEEPS)[0]))
    points = scaling.loc[[run.at]]
    chart = predicted_scaling(
        points.assign(speedup_low=0.5, speedup_high=2.0), points, "t", (run.at,)
    )
    assert len(chart.labels["points-flagged-used"]) == 1 and "points-flagged" not in chart.labels
    chart = speedup_by_size(scaling, (run.at,))
    assert len(chart.labels["points-flagged-used"]) == 1
    assert "points-flagged" not in chart.labels and "points-2" not in chart.labels
    assert len(chart.labels["points-outlasted"]) == 1  # the 2-step run, off the lines


def test_without_the_advice_the_outlasted_run_is_no_answer(tmp_path: Path) -> None:
    table = bench_table(read_results(TWO_SWEEPS)[0])
    section = build_bench_section(table, FigureFiles(tmp_path))
    assert section is not None
    scaling = bench_scaling(table)
    shorter = scaling[outlasted(scaling) & (scaling["accelerators"] > 1)]
    said = _speedups(section.said)
    assert not {f"{s:.2f}x" for s in shorter["speedup"]} & said
    # the only run of the longer sweep there is flagged: no measured answer
    (answer,) = section.answer
    assert "no measured answer" in answer


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
    assert section.summary == bench_summary(scaling) == bench_summary(scaling, section.read)
    assert not outlasted(scaling).any()
    measured = advice.calibration.runs.measured
    assert [(r.accelerators, r.flagged) for r in section.read] == [
        (m.devices, m.flagged) for m in measured
    ]
    assert [r.speedup for r in section.read] == pytest.approx([m.speedup for m in measured])
    (own,) = [line for line in section.answer if line.startswith("Your hardware")]
    assert all(_said(r) in own for r in section.read)


def test_runs_outlasted_by_flagged_runs_answer_nothing() -> None:
    """Both 30-step runs flagged: the 2-step runs they outlast are not read either, so no
    run answers, and the summary names the outlasted ones."""
    records = read_results(TWO_SWEEPS)[0]
    for record in records:
        if record["config"]["steps"] == 30:
            record["flags"] = ["noisy steps: p95 2x the median"]
    scaling = bench_scaling(bench_table(records))
    shorter = scaling[outlasted(scaling)]
    assert len(shorter) == 2 and not shorter["flagged"].any()  # the premise
    (line,) = bench_summary(scaling)
    assert all(f"{r.configuration} on {r.accelerators}" in line for r in shorter.itertuples())
    assert not _speedups([line])
