"""Children end with their parent however it ends, and the run folders a killed
process leaves are removed by the next run (never one a live run holds, never a folder
that is not gpuscale's)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import gpuscale
from gpuscale.sources.processes import (
    RUN_PREFIX,
    remove_stale,
    remove_stale_runs,
    run_folder,
)

SRC = str(Path(gpuscale.__file__).resolve().parents[1])  # the gpuscale under test
pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _old(folder: Path) -> Path:
    past = time.time() - 60
    os.utime(folder, (past, past))
    return folder


# A parent that starts a grandchild (which arms its lifeline, or is started with one),
# prints the grandchild's pid, and waits to be killed.
PARENT = """
import subprocess, sys, time
from gpuscale.sources.processes import lifeline
child = [sys.executable, "-c", sys.argv[2]]
kwargs = {"preexec_fn": lifeline()} if sys.argv[1] == "preexec" else {}
proc = subprocess.Popen(child, start_new_session=True, **kwargs)
print(proc.pid, flush=True)
time.sleep(600)
"""
LIFELINE = "from gpuscale.sources.processes import die_with_parent; import time; "
ARMED = LIFELINE + "die_with_parent(); time.sleep(600)"
WATCHED = LIFELINE + "die_with_parent(watch=True, interval_s=0.1); time.sleep(600)"
PLAIN = "import time; time.sleep(600)"


@pytest.mark.parametrize(
    "how, child",
    [("preexec", PLAIN), ("self", ARMED), ("self", WATCHED)],
    ids=["lifeline", "armed", "watched"],
)
def test_a_child_ends_when_its_parent_is_killed(how: str, child: str) -> None:
    env = {**os.environ, "PYTHONPATH": SRC}
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, how, child], env=env, stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    grandchild = int(parent.stdout.readline())
    try:
        time.sleep(1.0)  # the grandchild is up and armed
        assert _alive(grandchild)
        parent.send_signal(signal.SIGKILL)
        parent.wait(timeout=30)
        deadline = time.monotonic() + 10
        while _alive(grandchild) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(grandchild), "the grandchild outlived its killed parent"
    finally:
        if _alive(grandchild):
            os.kill(grandchild, signal.SIGKILL)


def test_a_stale_run_folder_is_removed_and_a_held_one_kept(tmp_path: Path) -> None:
    with run_folder("bench", tmp_path) as live:
        _old(live)
        stale = tmp_path / f"{RUN_PREFIX}bench-stale"  # its process was killed
        stale.mkdir()
        (stale / ".gpuscale-run").touch()
        _old(stale)
        theirs = tmp_path / f"{RUN_PREFIX}report"  # a user's folder of a like name
        theirs.mkdir()
        _old(theirs)
        assert remove_stale_runs(tmp_path) == [stale]
        assert live.is_dir() and theirs.is_dir()
    assert not live.exists()


def test_a_young_folder_held_by_no_one_is_stale(tmp_path: Path) -> None:
    """A report killed mid-write (SIGKILL) left its temporary folder; the next report,
    all from the cache, started within the 2 s grace and left it there. A report killed
    before it wrote anything left an empty one, which a grace kept too."""
    written = tmp_path / ".out.tmp-killed"
    written.mkdir()
    (written / "index.html").write_text("half")
    empty = tmp_path / ".out.tmp-new"
    empty.mkdir()
    assert sorted(remove_stale(tmp_path, ".out.tmp-*")) == sorted([empty, written])


def test_a_folder_being_made_is_never_taken_for_stale(tmp_path: Path) -> None:
    """Between ``mkdtemp`` and its lock a folder is held by no one: its maker holds the
    parent's lock meanwhile, and the judge waits for it."""
    maker = subprocess.Popen(
        [sys.executable, "-c", "import sys, tempfile, time; from pathlib import Path; "
         "from gpuscale.sources.processes import _making_in, hold\n"
         "with _making_in(Path(sys.argv[1])):\n"
         "    f = Path(tempfile.mkdtemp(prefix='.out.tmp-', dir=sys.argv[1]))\n"
         "    print(1, flush=True); sys.stdin.readline(); hold(f)\n"
         "print(2, flush=True); time.sleep(600)",
         str(tmp_path)],
        env={**os.environ, "PYTHONPATH": SRC}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        assert maker.stdout is not None and maker.stdin is not None
        assert maker.stdout.readline().strip() == "1"  # made, not yet locked
        found: list[list[Path]] = []
        judge = threading.Thread(target=lambda: found.append(remove_stale(tmp_path, ".out.tmp-*")))
        judge.start()
        judge.join(timeout=0.5)
        assert judge.is_alive(), "the judge did not wait for the maker"
        maker.stdin.write("\n")
        maker.stdin.flush()
        assert maker.stdout.readline().strip() == "2"
        judge.join(timeout=30)
        assert found == [[]]
        assert len(list(tmp_path.glob(".out.tmp-*"))) == 1
    finally:
        maker.kill()
        maker.wait(timeout=30)
    assert len(remove_stale(tmp_path, ".out.tmp-*")) == 1  # its maker is gone


def test_a_folder_held_by_another_live_process_is_kept(tmp_path: Path) -> None:
    folder = tmp_path / ".out.tmp-abc"
    folder.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from gpuscale.sources.processes import hold; "
         "hold(__import__('pathlib').Path(sys.argv[1])); print(1, flush=True); time.sleep(600)",
         str(folder)],
        env={**os.environ, "PYTHONPATH": SRC}, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "1"
        _old(folder)
        assert remove_stale(tmp_path, ".out.tmp-*") == []
        holder.kill()
        holder.wait(timeout=30)
        assert remove_stale(tmp_path, ".out.tmp-*") == [folder]  # its holder is gone
    finally:
        holder.kill()
        holder.wait(timeout=30)


def test_a_child_whose_parent_died_before_it_armed_ends_at_once() -> None:
    """The kernel's parent-death signal, armed after the parent died, never comes: a child
    told its starter's pid finds another parent and ends (a pool worker forked just
    before the report was killed)."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    for watch in (False, True):
        child = subprocess.run(
            [sys.executable, "-c", LIFELINE + f"die_with_parent(parent={gone.stdout.strip()}, "
             f"watch={watch}); time.sleep(30)"],
            env={**os.environ, "PYTHONPATH": SRC}, timeout=25,
        )  # fmt: skip
        assert child.returncode == 128 + signal.SIGKILL
