"""The README's two set-up commands exist and CI runs the test one."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def command_after(marker: str) -> str:
    text = (ROOT / "README.md").read_text()
    match = re.search(rf"<!-- {marker} -->\n```bash\n(.+)\n```", text)
    assert match, f"README lacks a command after <!-- {marker} -->"
    return match.group(1)


def test_main_command_runs_the_report() -> None:
    assert "gpuscale report" in command_after("main-command")


def test_ci_runs_the_readme_test_command() -> None:
    assert "pytest" in command_after("test-command")
    assert "test-command" in (ROOT / ".ci" / "run").read_text()
