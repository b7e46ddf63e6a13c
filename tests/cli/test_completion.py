"""Shell completion: ``gpuscale --show-completion SHELL`` prints the script that
``--install-completion`` installs, and the script's completer names the commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
RUN = "import sys; sys.argv = ['gpuscale', *sys.argv[1:]]; from gpuscale.cli import main; main()"


def _gpuscale(*argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", RUN, *argv],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": SRC, **env},
        timeout=120,
    )


def test_show_completion_prints_a_bash_script_for_gpuscale() -> None:
    done = _gpuscale("--show-completion", "bash")
    assert done.returncode == 0, done.stderr
    assert "_GPUSCALE_COMPLETE=complete_bash" in done.stdout
    assert "complete -o default -F" in done.stdout


def test_the_completer_completes_a_command_name() -> None:
    done = _gpuscale(_GPUSCALE_COMPLETE="complete_bash", COMP_WORDS="gpuscale adv", COMP_CWORD="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["advise"]


def test_install_completion_is_listed_in_help() -> None:
    done = _gpuscale("--help", COLUMNS="120")
    assert "--install-completion" in done.stdout
