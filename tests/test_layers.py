"""The layers in pyproject.toml's ``[tool.importlinter]`` hold: ``lint-imports`` passes on
the package, and fails on a copy of it given one back import, one circle or one torch
import outside ``gpuscale.bench``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytest.importorskip("importlinter", reason="import-linter not installed (pip install -e '.[test]')")


def lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """``lint-imports`` on the package under ``root/src`` with ``root/pyproject.toml``."""
    env = {**os.environ, "PYTHONPATH": str(root / "src")}
    command = [sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()"]
    return subprocess.run(
        [*command, "--config", str(root / "pyproject.toml"), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )


def test_the_package_keeps_its_layers() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def copy_with(tmp_path: Path, module: str, line: str) -> Path:
    """A copy of the sources and pyproject.toml with ``line`` appended to ``module``."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copytree(
        ROOT / "src" / "gpuscale",
        tmp_path / "src" / "gpuscale",
        ignore=shutil.ignore_patterns("__pycache__", "data", "*.so", "templates"),
    )
    path = tmp_path / "src" / module
    path.write_text(path.read_text() + f"\n{line}\n")
    return tmp_path


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # a table module reaching up into the command line
        ("gpuscale/tables/codes.py", "from gpuscale.cli import app", "gpuscale.tables is not"),
        # the interconnect reaching back into bench (the old nvml -> telemetry arrow)
        (
            "gpuscale/interconnect/nvml.py",
            "def f():\n    from gpuscale.bench.telemetry import device_identity",
            "gpuscale.interconnect is not",
        ),
        # analysis and bench are siblings: neither imports the other
        ("gpuscale/analysis/trends.py", "import gpuscale.bench.results", "analysis is not"),
        # a circle inside one package (the old sources <-> archives one)
        ("gpuscale/sources/entries.py", "import gpuscale.sources.tree", "No cycles"),
        # torch outside bench, even lazily
        ("gpuscale/interconnect/topology.py", "def f():\n    import torch", "torch"),
        # the plan reaching past the tables into the round reader
        (
            "gpuscale/planning/systems.py",
            "from gpuscale.mlperf.systems import parse_system",
            "analysis and planning read the tables",
        ),
        # the analysis reading RCPs outside its one seam (critical_batch)
        (
            "gpuscale/analysis/score_intervals.py",
            "def f():\n    from gpuscale.mlperf.rcp import rcp_runs",
            "analysis and planning read the tables",
        ),
        # the hardware catalogue reaching up into a producer
        (
            "gpuscale/hardware/peaks.py",
            "def f():\n    from gpuscale.bench.telemetry import device_identity",
            "gpuscale.hardware is not",
        ),
        # the calibration wording its own refusal: its caller says it
        (
            "gpuscale/advice/calibrate/rows.py",
            "def f():\n    from gpuscale.advice.explain.caveats import refusal",
            "the advice's numbers (model, calibrate, search) say no words",
        ),
    ],
)
def test_a_back_import_breaks_the_contract(
    tmp_path: Path, module: str, line: str, broken: str
) -> None:
    done = lint_imports(copy_with(tmp_path, module, line))
    assert done.returncode != 0
    assert broken in done.stdout, done.stdout
