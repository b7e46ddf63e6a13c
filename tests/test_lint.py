"""The code passes ruff's lint and format checks (configured in pyproject.toml), with the
ruff version pinned in the ``test`` extra (a new release must not fail CI unchanged)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
tomllib = pytest.importorskip("tomllib", reason="Python 3.11+ reads pyproject.toml")


def pinned_ruff() -> str:
    """The version in ``ruff==X.Y.Z`` of the ``test`` extra."""
    extra = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["test"]
    pins = [m.group(1) for d in extra if (m := re.fullmatch(r"ruff==(\S+)", d.split(";")[0]))]
    assert len(pins) == 1, f"the test extra pins ruff once (ruff==X.Y.Z), not {extra}"
    return pins[0]


def ruff_or_skip() -> str:
    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff not installed (pip install -e '.[test]')")
    found = subprocess.run([ruff, "--version"], capture_output=True, text=True).stdout.split()
    if found[-1] != pinned_ruff():
        pytest.skip(f"ruff {found[-1]} installed, {pinned_ruff()} pinned: pip install -e '.[test]'")
    return ruff


@pytest.mark.parametrize("args", [["check"], ["format", "--check"]])
def test_ruff(args: list[str]) -> None:
    done = subprocess.run(
        [ruff_or_skip(), *args, "src", "tests", "benchmarks"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr
