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
