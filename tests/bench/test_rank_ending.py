"""How a bench rank ends. One that finished (its row written, its process group left)
ends without the interpreter's teardown, where torch 2.13's gloo threads aborted the
process now and then (SIGABRT, "terminate called without an active exception") after
the row was written, and `bench` then warned of a crash. One that failed still exits
nonzero, saying why. The teardown is seen through an ``atexit`` hook: it runs in the
teardown, so a rank that skipped it never runs it."""

from __future__ import annotations

import json
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

# The worker run as torchrun runs it (``python -m``), with a hook the teardown would run.
RANK = r"""
import atexit, runpy, sys
from pathlib import Path
marker = Path(sys.argv[1])
atexit.register(lambda: marker.write_text("the teardown ran"))
sys.argv = ["gpuscale.bench.worker", *sys.argv[2:]]
runpy.run_module("gpuscale.bench.worker", run_name="__main__", alter_sys=True)
"""


def _rank(tmp_path: Path, model: str) -> tuple[subprocess.CompletedProcess[str], Path]:
    """One rank of one (``WORLD_SIZE`` 1), benching ``model``: how it ended, its rows."""
    with socket.socket() as probe:  # a free port for the rank's store
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    config = BenchConfig(steps=2, warmup=1, timeout_s=120.0, backend="gloo").to_json()
    rows = tmp_path / "rows.jsonl"
    env = {
        **os.environ,
        "PYTHONPATH": SRC,
        **{"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "LOCAL_WORLD_SIZE": "1"},
        **{"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port},
    }
    env.pop("GPUSCALE_RUNNER_PID", None)
    marker = tmp_path / "teardown"
    worker = ["--models", model, "--config", config, "--jsonl", str(rows)]
    done = subprocess.run(
        [sys.executable, "-c", RANK, str(marker), *worker],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done, marker


def test_a_finished_rank_ends_without_the_teardown(tmp_path: Path) -> None:
    done, marker = _rank(tmp_path, "mlp-0.2m")
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "rows.jsonl").read_text().splitlines()]
    assert [(r["config"]["model"], r["status"]) for r in rows] == [("mlp-0.2m", "ok")]
    assert not marker.exists(), "the finished rank ran the interpreter's teardown"


def test_a_failed_rank_still_exits_nonzero_saying_why(tmp_path: Path) -> None:
    done, _ = _rank(tmp_path, "no-such-model")
    assert done.returncode != 0
    assert "no-such-model" in done.stderr
    assert not (tmp_path / "rows.jsonl").exists()


@pytest.mark.parametrize("code", [0, 3])
def test_the_exit_code_is_mains(tmp_path: Path, code: int) -> None:
    """``end_rank`` on its own: 0 ends at once, flushed (the unended line still comes
    out); a nonzero code is the exit status, the ordinary way (the teardown runs)."""
    marker = tmp_path / "teardown"
    script = (
        "import atexit, sys; from pathlib import Path\n"
        f"atexit.register(lambda: Path({str(marker)!r}).write_text('ran'))\n"
        "from gpuscale.bench.ranks import end_rank\n"
        "print('row written', end='')\n"
        f"end_rank(lambda: {code})\n"
    )
    env = {**os.environ, "PYTHONPATH": SRC}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == code, done.stderr[-2000:]
    assert done.stdout == "row written"
    assert marker.exists() == (code != 0)
