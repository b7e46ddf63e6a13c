"""A rank still starting when `bench` was killed (SIGKILL) and its launcher with it: the
kernel had already handed it to another parent before it armed the launcher's death
signal, so that signal never came, and rank 0 of two waited for its peer for the whole
timeout. It must end on finding `bench` gone."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import gpuscale
from gpuscale.bench.config import BenchConfig

SRC = str(Path(gpuscale.__file__).resolve().parents[1])  # the gpuscale under test
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs Linux")

# The test's own helper: a subreaper (the orphaned rank becomes its child, so its end and
# exit status can be waited for), which starts the "CLI", kills it once the rank is up,
# waits for the launcher to die with it, and only then lets the rank go on.
REAPER = r"""
import ctypes, os, signal, subprocess, sys, time
from pathlib import Path
ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
cli = subprocess.Popen([sys.executable, "-c", sys.argv[1], *sys.argv[2:]])
folder = Path(sys.argv[2])
while not (folder / "rank").is_file() or not (folder / "launcher").is_file():
    time.sleep(0.05)
time.sleep(0.2)
rank, launcher = int((folder / "rank").read_text()), int((folder / "launcher").read_text())
cli.kill(); cli.wait()
os.waitpid(launcher, 0)  # the launcher died with the CLI (its death signal); now ours
(folder / "go").touch()
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    pid, status = os.waitpid(rank, os.WNOHANG)
    if pid:
        print("ended", os.waitstatus_to_exitcode(status), flush=True)
        sys.exit(0)
    time.sleep(0.1)
os.kill(rank, signal.SIGKILL); os.waitpid(rank, 0)
print("alive", flush=True)
"""
# The CLI: starts the launcher as `bench` does (its environment and lifeline), and waits.
CLI = r"""
import sys, time
from pathlib import Path
from gpuscale.bench.launch import launcher_env, start
folder = Path(sys.argv[1])
launcher = [sys.executable, "-c", sys.argv[2], *sys.argv[1:]]
proc = start(launcher, folder / "log", launcher_env(folder))
(folder / "launcher").write_text(str(proc.pid))
time.sleep(600)
"""
# The launcher: starts rank 0 of 2 as torchrun does (its own session), and waits.
LAUNCHER = r"""
import os, subprocess, sys, time
from pathlib import Path
folder = Path(sys.argv[1])
rank = subprocess.Popen([sys.executable, "-c", sys.argv[3], *sys.argv[1:]], start_new_session=True)
(folder / "rank").write_text(str(rank.pid))
time.sleep(600)
"""
# The rank: held before the worker starts until its launcher is gone, then the real worker.
RANK = r"""
import os, sys, time
from pathlib import Path
folder = Path(sys.argv[1])
while not (folder / "go").exists():
    time.sleep(0.05)
os.execv(sys.executable, [sys.executable, "-m", "gpuscale.bench.worker", *sys.argv[4:]])
"""


def test_a_rank_orphaned_before_it_armed_its_lifeline_ends(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a free port for rank 0's store
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    config = BenchConfig(steps=1, warmup=1, timeout_s=300.0, backend="gloo").to_json()
    worker = ["--models", "mlp-0.2m", "--config", config, "--progress", str(tmp_path / "ev")]
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        **{"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2"},
        **{"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port},
    }
    env.pop("GPUSCALE_RUNNER_PID", None)
    done = subprocess.run(
        [sys.executable, "-c", REAPER, CLI, str(tmp_path), LAUNCHER, RANK, *worker],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    said = done.stdout.split()
    assert said[0] == "ended", "the orphaned rank was still alive a minute later"
    assert int(said[1]) == 128 + 9, done.stdout  # ended by its lifeline, not a failure
