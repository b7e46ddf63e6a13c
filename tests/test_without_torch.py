"""The base install (no PyTorch, no NVML) runs every command that does not measure, and the
ones that do measure say what to install; no traceback, as kneed tests its
matplotlib-less install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BLOCKER = """
import importlib.abc, sys
class Blocked(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("torch", "pynvml", "torchvision", "timm"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Blocked())
sys.argv = ["gpuscale", *sys.argv[1:]]
from gpuscale.cli import main
main()
"""


def gpuscale(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", BLOCKER, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


@pytest.mark.parametrize(
    "args",
    [
        ["scores", "--round", "v4.1", "-b", "bert", "-f", "csv"],
        ["analyze", "--round", "v4.1", "-b", "bert", "-f", "json", "--bootstrap", "100"],
        ["advise", "--params", "7M", "--step-ms", "20", "--batch", "64"],
        ["trends", "-b", "bert"],
        ["energy", "--round", "v4.1"],
    ],
)
def test_commands_that_do_not_measure_run_without_torch(args: list[str], tmp_path: Path) -> None:
    done = gpuscale(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and done.stdout.strip()


def test_report_without_torch(tmp_path: Path) -> None:
    done = gpuscale("report", "-b", "bert", "--out", str(tmp_path / "r"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r" / "index.html").stat().st_size > 10_000


@pytest.mark.parametrize("command", [["bench"], ["collectives"]])
def test_measuring_commands_say_what_to_install(command: list[str], tmp_path: Path) -> None:
    done = gpuscale(*command, cwd=tmp_path)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "gpuscale[bench]" in done.stderr
