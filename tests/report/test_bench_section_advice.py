"""The report's bench section and the advice: `report --advise` without a bench file is
refused, and the section reads a computed advice without loading the advice engine."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from gpuscale.cli import app

from ..mlperf.logbuilder import RoundBuilder


def test_advise_without_a_bench_file_is_refused_before_any_work(tmp_path: Path) -> None:
    """`report --advise` without --bench: exit 2, nothing written, --advise and --bench
    named (as an advice option without --advise is refused)."""
    root = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [3, 2, 4])
    out = tmp_path / "r"
    args = ["report", str(root.write_dir(tmp_path)), "--advise", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert not out.exists()
    assert "--advise" in result.stderr and "--bench" in result.stderr


def test_the_bench_section_reads_a_computed_advice_and_walks_no_advice_engine() -> None:
    """Issue 39: the report's bench section takes a computed advice; a wording helper of
    the advice (`on_a_larger_host`) had brought its table into advice/ again, and later
    the section's evidence words (`support`) and its type of the advice given loaded the
    whole engine. Importing the section loads no module of the advice package: a
    computed advice's predictions are read as the tables' schema shows them
    (``tables.advice.as_throughput``), what runs rest on is the bench's
    (``bench.support``)."""
    import subprocess
    import sys

    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, gpuscale.report.bench_section; "
            "print(sorted(m for m in sys.modules if m.startswith('gpuscale.advice')))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "[]", loaded.stdout
