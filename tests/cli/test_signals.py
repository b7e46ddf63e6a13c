"""Issues 25 and 38: one process tree, one fate. Whatever ends `gpuscale report` or
`gpuscale bench` (SIGINT, SIGTERM, SIGHUP, SIGKILL), no pool worker, torchrun launcher or
rank outlives it, nothing is appended to the results after it, and no temporary folder is
left (the one a SIGKILL leaves is removed by the next run); a caught signal ends the
command with one line and 128 + the signal's number, the previous output intact."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import gpuscale

SRC = str(Path(gpuscale.__file__).resolve().parents[1])  # the gpuscale under test
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGKILL]
SAID = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc"),
]


def _stat(pid: int) -> list[str] | None:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def _children(pid: int) -> set[int]:
    """Processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for name in os.listdir("/proc"):
        if name.isdigit() and (stat := _stat(int(name))) and int(stat[1]) == pid:
            found.add(int(name))
    return found


def _descendants(pid: int) -> set[int]:
    found, todo = set(), [pid]
    while todo:
        kids = _children(todo.pop()) - found
        found |= kids
        todo += kids
    return found


def _alive(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""


def _running_with(text: str) -> list[int]:
    """Live processes whose command line mentions ``text``."""
    return [
        int(name)
        for name in os.listdir("/proc")
        if name.isdigit()
        and int(name) != os.getpid()
        and text in _cmdline(int(name))
        and _alive(int(name))
    ]


def _with_env(entry: str) -> list[int]:
    """Live processes whose environment holds ``entry`` (``TMPDIR=...``): every process a
    command starts inherits it, those started after any snapshot of its tree too."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if entry.encode() in environ and _alive(int(name)):
            found.append(int(name))
    return found


def _wait_for(check, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"{what} within {seconds} s")


def _all_gone(pids: set[int], seconds: float = 15) -> list[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _alive(p)]


class Command:
    """A running ``gpuscale`` command whose stderr is read as it comes (by a thread), and
    that is killed with everything it started when the test ends, passed or not."""

    def __init__(self, argv: list[str], env: dict[str, str], mark: Path) -> None:
        self.mark = str(mark)  # in the command line of every process it starts
        self.proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.tree: set[int] = set()

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.append(line.decode(errors="replace"))

    def said(self, text: str) -> bool:
        return any(text in line for line in self.lines)

    def ended(self, signum: int, kept: Path | None = None) -> str:
        """Its stderr once it ended, checked for the code and the one line (of a sweep
        into ``kept``: the rows it kept there, and that --resume measures the rest)."""
        self.proc.wait(timeout=90)
        self.reader.join(timeout=10)
        text = "".join(self.lines)
        if signum == signal.SIGKILL:
            assert self.proc.returncode == -signal.SIGKILL
            return text
        assert self.proc.returncode == 128 + signum, text
        assert "Traceback" not in text
        last = text.strip().splitlines()[-1]
        if kept is None:
            assert last == SAID[signum]
            return text
        rows = len(kept.read_bytes().splitlines()) if kept.exists() else 0
        assert last.startswith(f"{SAID[signum]}: {rows} row"), last
        assert str(kept) in last and "--resume" in last, last
        return text

    def cleanup(self) -> None:
        """Kill what is left of it (a test that failed): its processes, found by the
        mark in their command line (a pid of the tree may since belong to another)."""
        for pid in {*self.tree, *_descendants(self.proc.pid), *_running_with(self.mark)}:
            if pid != self.proc.pid and self.mark in _cmdline(pid):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


def _env(tmp: Path) -> dict[str, str]:
    tmp.mkdir(exist_ok=True)
    return {**os.environ, "PYTHONPATH": SRC, "TMPDIR": str(tmp)}


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_ends_report_and_its_workers(tmp_path: Path, signum: int) -> None:
    out = tmp_path / "rep"
    out.mkdir()
    (out / "index.html").write_text("previous")  # an earlier report's
    (out / ".gpuscale-manifest").write_text("# gpuscale 0 report\nindex.html\n")
    env = _env(tmp_path / "tmp")
    # --no-cache: a first report, whose figure worker lives for seconds (a report that an
    # earlier test's killed run left cached is done before the signal could be sent)
    command = [sys.executable, "-m", "gpuscale.cli", "report", "--no-cache", "--out", str(out)]
    run = Command(command, env, tmp_path)
    try:
        _report_signalled(run, tmp_path, signum)
    finally:
        run.cleanup()
    out_dir = tmp_path / "rep"
    if signum == signal.SIGKILL:  # nothing could clean up: the next run does
        assert (out_dir / "index.html").read_text() == "previous"
        again = subprocess.run(
            [*command, "--round", "v4.1", "-b", "bert"], env=env, capture_output=True, timeout=120
        )
        assert again.returncode == 0, again.stderr.decode()
        assert (out_dir / "index.html").read_text() != "previous"
    else:
        assert (out_dir / "index.html").read_text() == "previous"
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name or ".old-" in p.name] == []


def _report_signalled(run: Command, tmp_path: Path, signum: int) -> None:
    def writing() -> bool:  # mid-write: its workers draw into the temporary folder
        folders = [p for p in tmp_path.iterdir() if ".tmp-" in p.name]
        return bool(folders and _children(run.proc.pid))

    _wait_for(writing, 60, "the report never started writing")
    time.sleep(0.3)
    run.tree = _descendants(run.proc.pid)
    assert run.tree, "the report started no worker"
    run.proc.send_signal(signum)
    run.ended(signum)
    assert not _all_gone(run.tree), "a report worker outlived the main process"


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_ends_bench_with_its_launch(tmp_path: Path, signum: int) -> None:
    """The torchrun launcher runs in its own session (so a terminal's Ctrl-C reaches the
    CLI first), and its ranks in theirs: however the CLI ends, they end with it, and no
    row is appended once it has ended (three models: orphans would go on to the next)."""
    pytest.importorskip("torch")
    out = tmp_path / "rows.jsonl"
    tmp = tmp_path / "tmp"
    env = _env(tmp)
    command = [sys.executable, "-m", "gpuscale.cli", "bench", "--backend", "gloo", "--nproc", "1"]
    command += ["--warmup", "0", "--out", str(out)]
    models = ["--models", "mlp-0.2m,cnn-0.3m,mlp-1m", "--steps", "20"]
    run = Command([*command, *models], env, tmp_path)
    try:
        _wait_for(lambda: run.said("started mlp-0.2m"), 120, "the bench never started a model")
        time.sleep(0.3)
        run.tree = _descendants(run.proc.pid)
        assert len(run.tree) >= 2, "no launcher and rank under the CLI"
        run.proc.send_signal(signum)
        run.ended(signum, kept=out)  # the line says what the sweep kept there
        written = out.read_bytes() if out.exists() else b""
        assert not _all_gone(run.tree), "the launcher or a rank outlived the CLI"
        assert _running_with(str(tmp)) == []
        time.sleep(3.0)
        assert (out.read_bytes() if out.exists() else b"") == written  # nothing after the end
    finally:
        run.cleanup()
    if signum == signal.SIGKILL:  # its run folder is left: the next run removes it
        assert list(tmp.iterdir())
        again = subprocess.run(
            [*command, "--models", "mlp-0.2m", "--steps", "1"],
            env=env,
            capture_output=True,
            timeout=180,
        )
        assert again.returncode == 0, again.stderr.decode()
    # torchelastic's folders lived in the run's own folder, removed with it
    assert sorted(p.name for p in tmp.iterdir()) == []


@pytest.mark.parametrize(
    "signum", [signal.SIGHUP, signal.SIGTERM, signal.SIGKILL], ids=lambda s: signal.Signals(s).name
)
@pytest.mark.parametrize("delay_s", [0.0, 2.5])
def test_no_process_of_bench_outlives_it_whenever_the_signal_comes(
    tmp_path: Path, signum: int, delay_s: float
) -> None:
    """The signal at any moment of a launch (before the launcher has started its rank,
    while it starts, while it runs): no process started by the CLI, found by the
    environment it inherits rather than a snapshot of the tree, outlives it."""
    pytest.importorskip("torch")
    out, tmp = tmp_path / "rows.jsonl", tmp_path / "tmp"
    env = _env(tmp)
    command = [sys.executable, "-m", "gpuscale.cli", "bench", "--backend", "gloo", "--nproc", "1"]
    command += ["--warmup", "0", "--out", str(out), "--models", "mlp-0.2m,mlp-1m", "--steps", "20"]
    run = Command(command, env, tmp_path)
    try:
        _wait_for(lambda: run.said("started mlp-0.2m"), 120, "the bench never started a model")
        time.sleep(delay_s)
        run.proc.send_signal(signum)
        run.proc.wait(timeout=90)
        left = _wait_for_none(lambda: _with_env(f"TMPDIR={tmp}"), 15)
        assert left == [], [_cmdline(p) for p in left]
    finally:
        run.cleanup()
        for pid in _with_env(f"TMPDIR={tmp}"):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def _wait_for_none(found, seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := found()) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


def test_a_killed_collectives_sweep_leaves_no_rank(tmp_path: Path) -> None:
    """``gpuscale collectives`` killed mid-sweep (SIGKILL: nothing can clean up) takes its
    torchrun launcher and ranks with it; before, they went on (a --gap-ms sweep for
    hours, at a third of a core each)."""
    pytest.importorskip("torch")
    out = tmp_path / "sweep.jsonl"
    command = [sys.executable, "-m", "gpuscale.cli", "collectives", "--backend", "gloo"]
    command += ["--nproc", "2", "--max-bytes", "1K", "--gap-ms", "60000", "--out", str(out)]
    run = Command(command, _env(tmp_path / "tmp"), tmp_path)
    try:
        ranks = _wait_for(
            lambda: (
                {p for p in _descendants(run.proc.pid) if "bench.collectives" in _cmdline(p)}
                if len(_descendants(run.proc.pid)) >= 3
                else None
            ),
            120,
            "no launcher and ranks under the CLI",
        )
        run.tree = _descendants(run.proc.pid)
        assert len(ranks) >= 2
        run.proc.send_signal(signal.SIGKILL)
        run.ended(signal.SIGKILL)
        assert not _all_gone(run.tree), "the launcher or a rank outlived the CLI"
    finally:
        run.cleanup()
