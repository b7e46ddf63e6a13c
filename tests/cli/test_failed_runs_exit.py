"""`analyze --bench` on a file whose every run failed says why each failed and exits 1, as
`bench` does after failures (`advise` on the same file exits 2), so a script can tell
a file of failures from a measured one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

from ..builders import bench_record


def _write(path: Path, statuses: list[str]) -> Path:
    rows = []
    for n, status in enumerate(statuses, start=1):
        row = bench_record("mlp-0.2m", 199_946, n, 1000.0 * n, status=status)
        if status != "ok":
            row["error"] = f"crashed: exit 1: RuntimeError: boom at {n}"
        rows.append(json.dumps(row))
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_a_file_of_failed_runs_exits_1_after_saying_why(tmp_path: Path, fmt: str) -> None:
    failed = _write(tmp_path / "failed.jsonl", ["error", "error"])
    result = CliRunner().invoke(app, ["analyze", "--bench", str(failed), "-f", fmt])
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    if fmt == "table":
        assert "boom at 1" in result.output and "boom at 2" in result.output
    if fmt == "json":  # the document is still whole
        assert json.loads(result.stdout)["bench"] is not None


def test_a_file_with_a_measured_run_exits_0(tmp_path: Path) -> None:
    mixed = _write(tmp_path / "mixed.jsonl", ["ok", "error"])
    result = CliRunner().invoke(app, ["analyze", "--bench", str(mixed)])
    assert result.exit_code == 0, result.output
    assert "boom at 2" in result.output


def test_advice_on_a_model_whose_every_run_failed_says_they_failed(tmp_path: Path) -> None:
    """A model whose runs all failed is not said to have "no trustworthy N = 1 run"
    (nothing is untrustworthy: nothing was measured)."""
    failed = bench_record("tiny.py:nonscalar_loss", 1_000, 1, 100.0, status="error")
    failed["error"] = "RuntimeError: grad can be implicitly created only for scalar outputs"
    rows = [failed, *(bench_record("mlp-0.2m", 199_946, n, 900.0 * n) for n in (1, 2))]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    args = ["advise", "--bench", str(path), "--model", "tiny.py:nonscalar_loss"]
    result = CliRunner().invoke(app, args)
    said = " ".join(result.output.split())
    assert result.exit_code == 2, said
    assert f"every run of 'tiny.py:nonscalar_loss' in {path} failed (1)" in said
    assert "only for scalar outputs" in said and "trustworthy" not in said


def test_a_file_of_failed_runs_says_what_to_do_first(tmp_path: Path, golden) -> None:
    """`analyze --bench` on failed runs said "no successful bench run to analyse", then
    each cause: no word on what to do."""
    failed = _write(tmp_path / "failed.jsonl", ["error", "error"])
    result = CliRunner().invoke(app, ["analyze", "--bench", str(failed)])
    lines = result.output.splitlines()
    assert result.exit_code == 1 and lines[0].startswith("no successful bench run")
    assert "--resume" in lines[0] and sum("boom at" in x for x in lines[1:]) == 2  # below it
    golden.check("cli/bench_failed", "every run failed", lines[0])


def test_a_report_of_failed_runs_names_the_file_to_analyze(tmp_path: Path) -> None:
    """`report --bench F` whose every run failed says to run `gpuscale analyze --bench F`
    for why (it said `gpuscale analyze --bench` without the file), the path quoted as a
    shell takes it, and exits 1 as `analyze --bench` does."""
    failed = _write(tmp_path / "my failed.jsonl", ["error", "error"])
    out = tmp_path / "report"
    args = ["report", "-b", "bert", "--bench", str(failed), "--out", str(out), "--no-cache"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert f"`gpuscale analyze --bench '{failed}'` says why each did" in result.stderr
