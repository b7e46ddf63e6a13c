"""Issue 25: SIGTERM and SIGINT end a command with one line and 143/130, no worker
outlives the main process, no temporary folder is left, the previous output is intact."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _children(pid: int) -> set[int]:
    """Processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_ends_report_cleanly(tmp_path, signum) -> None:
    out = tmp_path / "rep"
    out.mkdir()
    (out / "index.html").write_text("previous")
    env = {**os.environ, "PYTHONPATH": SRC}
    command = [sys.executable, "-m", "gpuscale.cli", "report", "--out", str(out)]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    kids: set[int] = set()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(kids) < 1:  # the report's workers started
        kids |= _children(proc.pid)
        time.sleep(0.05)
    time.sleep(0.5)
    kids |= _children(proc.pid)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, stderr
    text = stderr.decode()
    assert "Traceback" not in text
    assert text.strip().splitlines()[-1] in ("terminated", "interrupted")
    for _ in range(100):
        if not any(_alive(k) for k in kids):
            break
        time.sleep(0.1)
    assert not [k for k in kids if _alive(k)], "a worker outlived the main process"
    assert not [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name or ".old-" in p.name]
    assert (out / "index.html").read_text() == "previous"


def _running_with(text: str) -> list[int]:
    """Live processes whose command line mentions ``text``."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) != os.getpid():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if text in cmdline and _alive(int(name)):
                found.append(int(name))
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_bench_leaves_no_rank_running(tmp_path, signum) -> None:
    """The torchrun launcher runs in its own session (so a terminal's Ctrl-C reaches the
    CLI first): the CLI must end it and its ranks, and nothing is written afterwards."""
    pytest.importorskip("torch")
    out = tmp_path / "rows.jsonl"
    env = {**os.environ, "PYTHONPATH": SRC}
    command = [sys.executable, "-m", "gpuscale.cli", "bench", "--backend", "gloo"]
    command += ["--nproc", "1", "--models", "mlp-0.2m", "--steps", "100000", "--out", str(out)]
    proc = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    # the CLI, torchrun's launcher and the rank all name the output file
    while time.monotonic() < deadline and len(_running_with(str(out))) < 3:
        time.sleep(0.2)
    assert len(_running_with(str(out))) >= 3, "the bench never started its rank"
    time.sleep(1.0)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, stderr.decode()
    assert "Traceback" not in stderr.decode()
    time.sleep(2.0)
    assert _running_with(str(out)) == []  # launcher and ranks ended with the CLI
    assert not out.exists() or out.read_text() == ""  # nothing appended after the exit
