"""Every command over a scores table with values missing in every nullable column (as the
published v0.7 round leaves a system's accelerators, a result's global batch and its
samples to converge empty): each exits without a traceback, the report with its page
written, whatever cells are missing.

A property test over few small tables (``ragged.py``): each example blanks at least one
cell of every nullable column of ``SCORES_SCHEMA``, and the commands read the table as a
round (``gpuscale.mlperf.load.load_rounds`` returns it).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.report.page import recommendation_rows
from gpuscale.report.recommend import recommend

from .ragged import NULLABLE, base_rows, tables_of, with_holes

runner = CliRunner()
ROWS = base_rows()


def _holes() -> st.SearchStrategy[dict[str, set[int]]]:
    """At least one blank cell in every nullable column, at most a third of the rows
    (so that most examples still have something to analyse)."""
    cells = st.sets(st.integers(0, len(ROWS) - 1), min_size=1, max_size=len(ROWS) // 3)
    return st.fixed_dictionaries({column: cells for column in NULLABLE})


def _commands(out: Path) -> list[list[str]]:
    round_ = ["--round", "v4.1"]
    return [
        ["scores", *round_],
        ["analyze", *round_, "-b", "all"],
        ["analyze", *round_, "-b", "all", "--reference", "family", "--decompose", "--explain"],
        ["analyze", *round_, "-b", "all", "-f", "json"],
        ["plan", *round_, "-w", "bert", "-a", "H100", "-n", "4,8,16,64"],
        ["plan", *round_, "-w", "llama2_70b_lora", "-a", "B200", "-n", "8,32", "-f", "json"],
        ["energy", *round_],
        ["trends", *round_],
        ["report", *round_, "-b", "all", "--out", str(out)],
    ]


@pytest.mark.slow
@settings(
    max_examples=3,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(holes=_holes())
def test_every_command_reads_a_round_with_missing_values(
    holes: dict[str, set[int]], monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = tables_of(with_holes(ROWS, holes))
    monkeypatch.setattr("gpuscale.mlperf.load.load_rounds", lambda *a, **k: tables)
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "report"
        for args in _commands(out):
            result = runner.invoke(app, args)
            crashed = result.exception is not None and not isinstance(result.exception, SystemExit)
            assert not crashed, (args, holes, result.exception)
            assert "Traceback" not in result.output, (args, result.output)
            # 2: nothing to show, said (every result of a workload without its time)
            assert result.exit_code in (0, 2), (args, result.output)
            if args[0] == "report":
                assert result.exit_code == 0, result.output
                assert (out / "index.html").is_file()


def test_the_first_screen_says_what_it_cannot_read(golden) -> None:
    """v0.7's results have no samples to converge: the factors of E' at the next count
    are unread, and the recommendation says so instead of stopping."""
    from gpuscale.analysis import AnalysisOptions
    from gpuscale.analysis.analyze import analyze

    holes = {"samples_to_converge": set(range(len(ROWS))), "global_batch_size": {0, 3, 4}}
    tables = tables_of(with_holes(ROWS, holes))
    result = next(r for r in analyze(tables, ["bert"], AnalysisOptions(n_boot=100)))
    rec = recommend(result)
    assert (rec.accelerators, rec.next_accelerators) == (16, 32)
    assert rec.decides == ""
    assert rec.throughput_ratio != rec.throughput_ratio  # NaN: unread
    assert rec.unread == ("throughput", "convergence")
    # E' at 32 over the family's best (Core's 29.5 min at 8): the accelerator-hours' ratio
    assert rec.next_e_ratio == pytest.approx((29.5 * 8) / (10.0 * 32))
    why = recommendation_rows([rec])[0]["Why not more"]
    golden.check("report/first_screen", "no samples to converge: the factors unread", why)


@pytest.mark.shared
@pytest.mark.slow
def test_report_on_the_raw_v07_round(shared_archive, tmp_path: Path) -> None:
    """The published v0.7 round, read in place (its results lack throughput, samples
    and system fields): the page is written and each workload's answer printed."""
    out = tmp_path / "a folder with spaces"
    result = runner.invoke(app, ["report", str(shared_archive("v0.7")), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert (out / "index.html").is_file()
    assert any(
        line.startswith("BERT (v0.7): 16 accelerators") for line in result.stdout.split("\n")
    )


def test_no_nan_rendered_for_a_round_without_global_batches(monkeypatch, golden) -> None:
    """v0.7's MiniGo results have no global batch: the decomposition's sentence (report)
    and the terminal's decomposition and explanation say nothing of a batch rather than
    print "nan"; the factors of E' (read from measured samples) are still said."""
    from gpuscale.analysis import AnalysisOptions
    from gpuscale.analysis.analyze import analyze
    from gpuscale.report.findings import why_efficiency_falls

    holes = {"global_batch_size": set(range(len(ROWS)))}
    tables = tables_of(with_holes(ROWS, holes))
    result = next(
        r
        for r in analyze(
            tables, ["bert"], AnalysisOptions(n_boot=100, convergence_basis="measured")
        )
    )
    assert result.table["global_batch_size"].isna().all()
    sentence = why_efficiency_falls(result.table, "H100-SXM5-80GB", "measured")
    assert sentence is not None and "nan" not in sentence.lower()
    assert "global batch" not in sentence and "convergence factor" in sentence
    golden.check("report/findings", "no global batch: the batch clause left out", sentence)
    monkeypatch.setattr("gpuscale.mlperf.load.load_rounds", lambda *a, **k: tables)
    for args in (
        ["analyze", "--round", "v4.1", "-b", "bert"],
        ["analyze", "--round", "v4.1", "-b", "bert", "--reference", "family", "--decompose"],
        [
            "analyze",
            "--round",
            "v4.1",
            "-b",
            "bert",
            "--explain",
            "--convergence-basis",
            "measured",
        ],
        [
            "analyze",
            "--round",
            "v4.1",
            "-b",
            "bert",
            "--decompose",
            "--convergence-basis",
            "measured",
        ],
    ):
        result = runner.invoke(app, args)
        assert result.exit_code == 0, (args, result.output)
        assert "nan" not in result.output.lower(), (args, result.output)
