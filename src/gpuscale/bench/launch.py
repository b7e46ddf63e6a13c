"""One torchrun launch of the bench worker, watched: its events read as they come, the
rows it measured appended by this process (the only writer of the results file), the
model that runs past ``--timeout`` stopped, and the launch ended with its runner.

The launcher runs in its own session (a terminal's Ctrl-C reaches ``gpuscale`` first,
which stops the launch), is killed by the kernel when this process ends however it ends
(``gpuscale.sources.processes.lifeline``; its ranks end with it the same way), and keeps
its temporary files (torchelastic's among them) in the run's folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from gpuscale.sources.processes import RUNNER_PID, lifeline


def torchrun_command(
    world: int,
    module: str,
    *,
    nnodes: int = 1,
    node_rank: int = 0,
    rdzv_endpoint: str | None = None,
    rdzv_id: str = "gpuscale",
) -> list[str]:
    """``python -m torch.distributed.run ... -m MODULE``: ``--standalone`` on one node,
    torchrun's c10d rendezvous on several (the caller appends the module's arguments)."""
    if nnodes == 1:
        launch = ["--standalone"]
    else:
        launch = [
            f"--nnodes={nnodes}",
            f"--node-rank={node_rank}",
            "--rdzv-backend=c10d",
            f"--rdzv-endpoint={rdzv_endpoint}",
            f"--rdzv-id={rdzv_id}",
            f"--rdzv-conf=is_host={str(node_rank == 0).lower()}",
        ]
    return [
        sys.executable,
        "-m",
        "torch.distributed.run",
        *launch,
        f"--nproc-per-node={world}",
        "-m",
        module,
    ]


def launcher_env(folder: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a launch: unbuffered output, temporary files in ``folder``
    (removed with it), and this process's pid for the ranks to watch (one still starting
    when the launcher died never armed the launcher's death signal: it ends on finding
    this process gone, ``die_with_runner``)."""
    tmp = folder / "tmp"
    tmp.mkdir(exist_ok=True)
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "TMPDIR": str(tmp), **(extra or {})}
    return {**env, RUNNER_PID: str(os.getpid())}


def start(command: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start a launcher: output to ``log``, its own session, ended with this process."""
    with log.open("ab") as sink:
        return subprocess.Popen(
            command,
            stdout=sink,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
            preexec_fn=lifeline(),
        )


def stop(proc: subprocess.Popen[bytes]) -> None:
    """End the launcher and its workers: SIGTERM to its process group (torchrun then ends
    its ranks), SIGKILL after 10 s (the ranks then die with it)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, PermissionError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


class Events:
    """The worker's progress file read as it grows: complete lines only, each once, as
    (event, key, extra); every event read so far in ``seen``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.seen: list[tuple[str, str, str]] = []

    def new(self) -> list[tuple[str, str, str]]:
        try:
            with self.path.open("rb") as handle:
                handle.seek(self.offset)
                chunk = handle.read()
        except FileNotFoundError:
            return []
        end = chunk.rfind(b"\n") + 1  # a line still being written waits for the next look
        self.offset += end
        found = []
        for line in chunk[:end].decode("utf-8", errors="replace").splitlines():
            event, _, rest = line.partition("\t")
            key, _, extra = rest.partition("\t")
            found.append((event, key, extra))
        self.seen += found
        return found


def watch(
    proc: subprocess.Popen[bytes],
    events: Events,
    on_event: Callable[[str, str, str], None],
    limit_s: Callable[[bool], float],
) -> str:
    """Wait for the launch, handing each event to ``on_event`` as it comes; stop it when
    a model (or, before the first, the launch) runs past ``limit_s(started_any)``.
    Returns ``ok``, ``exit N``, ``timeout`` or ``interrupted``; on any other exception
    (a row that cannot be written, the CLI's SIGTERM) the launch is stopped and it is
    raised."""
    since, started = time.monotonic(), False
    try:
        while True:
            running = proc.poll() is None
            for event in events.new():
                on_event(*event)
                if event[0] == "started":
                    since, started = time.monotonic(), True
            if not running:
                break
            if time.monotonic() - since > limit_s(started):
                stop(proc)
                return "timeout"
            time.sleep(0.2)
    except KeyboardInterrupt:
        stop(proc)
        return "interrupted"
    except BaseException:  # the CLI's SIGTERM, a full disk: no rank runs on
        stop(proc)
        raise
    return "ok" if proc.returncode == 0 else f"exit {proc.returncode}"


def row_of(extra: str) -> dict | None:
    """The record a ``row`` event carries (None when it is not a JSON object)."""
    try:
        record = json.loads(extra)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None
