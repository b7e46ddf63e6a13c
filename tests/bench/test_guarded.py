"""A user's model code runs only where it is guarded. A factory that hangs, exits
(``sys.exit``, ``os._exit``), allocates or raises ``KeyboardInterrupt`` is a row with that
cause and a non-zero exit within ``--timeout`` plus a few seconds, the other models still
run, and the whole process tree stays under 1 GB; one that fails only in the ranks, at any
moment of their life, is a row with the cause the rank raised."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("torch")

from gpuscale.bench.config import ModelError
from gpuscale.bench.probe import count_parameters
from gpuscale.bench.results import read_results

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "tests/bench/hostile_models.py"


@pytest.mark.parametrize(
    "factory, status, words",
    [
        ("hang", "timeout", "ran past --timeout (4 s)"),
        ("exits", "error", "called sys.exit(3)"),
        ("hard_exit", "crashed", "exited with code 7"),
        ("allocate", "oom", "past the 512 MiB memory limit"),
        ("interrupt", "error", "raised KeyboardInterrupt"),
        # a native library that fails to allocate under the cap and exits: the cap is named
        ("native_oom", "oom", "failed to allocate memory under the 512 MiB memory limit"),
    ],
)
def test_a_hostile_factory_is_counted_in_a_guarded_child(
    monkeypatch: pytest.MonkeyPatch, factory: str, status: str, words: str
) -> None:
    monkeypatch.chdir(ROOT)
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        count_parameters(f"{HOSTILE}:{factory}", timeout_s=4, memory_bytes=512 << 20)
    assert caught.value.status == status and words in str(caught.value)
    assert time.monotonic() - started < 4 + 30  # the timeout, and a child's torch import
    assert count_parameters(f"{HOSTILE}:rank_only", timeout_s=60, memory_bytes=None) == 15


def test_the_parameter_count_runs_with_one_blas_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # each OpenBLAS thread reserves buffers: with 16 of them, importing torchvision passed a
    # 1 GiB cap on an H100 host; a count needs one, whatever the user's environment says
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "16")
    assert count_parameters(f"{HOSTILE}:blas_threads", timeout_s=60, memory_bytes=None) == 1


def test_the_timeout_counts_from_the_model_s_code_not_the_child_s_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A child that takes longer to start than ``--timeout`` (PyTorch's import on a busy
    host; here a ``sitecustomize`` that sleeps 4 s) still counts a quick factory: the
    timeout is the model's, as a launch's ranks get to come up first (it used to be a
    ``timeout`` row)."""
    (tmp_path / "sitecustomize.py").write_text("import time\ntime.sleep(4)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT / "src")]))
    monkeypatch.chdir(ROOT)
    assert count_parameters(f"{HOSTILE}:rank_only", timeout_s=2, memory_bytes=None) == 15


def _pss(pid: int) -> int:
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    found = re.search(r"^Pss:\s+(\d+) kB", rollup, re.MULTILINE)
    return int(found.group(1)) * 1024 if found else 0


class Peak:
    """The most memory a process and its descendants held at once, sampled every 50 ms
    while the ``with`` block runs: their proportional set sizes summed (a page shared
    by several, such as PyTorch's libraries in the CLI, torchrun and a rank, counted
    once in all)."""

    def __init__(self, pid: int) -> None:
        self.pid, self.bytes = pid, 0
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _tree_pss(self) -> int:
        parents: dict[int, int] = {}
        for name in os.listdir("/proc"):
            try:
                if name.isdigit():
                    stat = Path(f"/proc/{name}/stat").read_text()
                    parents[int(name)] = int(stat.rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
        tree, todo = {self.pid}, [self.pid]
        while todo:
            parent = todo.pop()
            kids = [p for p, pp in parents.items() if pp == parent and p not in tree]
            tree.update(kids)
            todo += kids
        return sum(_pss(pid) for pid in tree)

    def _sample(self) -> None:
        while not self.stop.is_set():
            self.bytes = max(self.bytes, self._tree_pss())
            time.sleep(0.05)

    def __enter__(self) -> Peak:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def _bench(tmp_path: Path, args: list[str], timeout: float) -> tuple[int, str, int]:
    """Run ``gpuscale bench`` from the repository (the hostile file's path is relative);
    its exit code, stderr and the peak memory of its process tree."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TMPDIR": str(tmp_path)}
    command = [sys.executable, "-m", "gpuscale.cli", "bench", "--backend", "gloo", "--nproc"]
    command += ["1", "--steps", "1", "--warmup", "0", *args]
    pipe = subprocess.PIPE
    proc = subprocess.Popen(command, cwd=ROOT, env=env, stdout=pipe, stderr=pipe)
    with Peak(proc.pid) as peak:
        _, stderr = proc.communicate(timeout=timeout)
    return proc.returncode, stderr.decode(), peak.bytes


def test_hostile_factories_are_rows_and_the_other_models_run(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    hostile = ["hang", "exits", "hard_exit", "allocate", "interrupt"]
    args = [arg for name in hostile for arg in ("--model", f"{HOSTILE}:{name}")]
    # the timeout leaves the ladder model time to run on a loaded machine
    args += ["--models", "mlp-0.2m", "--timeout", "20", "--memory-limit", "600M"]
    code, stderr, peak = _bench(tmp_path, [*args, "--out", str(out)], timeout=300)
    assert code == 1, stderr  # a run failed; the rest ran
    assert "Traceback" not in stderr
    records, problems = read_results(out)
    assert problems == []
    rows = {r["config"]["model"].rpartition(":")[2]: r for r in records}
    assert {name: r["status"] for name, r in rows.items()} == {
        "hang": "timeout",
        "exits": "error",
        "hard_exit": "crashed",
        "allocate": "oom",
        "interrupt": "error",
        "mlp-0.2m": "ok",
    }
    assert "called sys.exit(3)" in rows["exits"]["error"]
    assert "KeyboardInterrupt" in rows["interrupt"]["error"]
    assert peak < 1 << 30, f"the process tree held {peak / 2**20:.0f} MiB"
    assert list(tmp_path.glob("gpuscale-run-*")) == []


def test_failures_only_in_the_ranks_are_rows_with_their_cause(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    args = ["--models", ",".join(f"{HOSTILE}:rank_{kind}" for kind in ("only", "exit", "hang"))]
    args += ["--model", f"{HOSTILE}:rank_allocate", "--timeout", "20", "--memory-limit", "700M"]
    code, stderr, peak = _bench(tmp_path, [*args, "--out", str(out)], timeout=400)
    assert code == 1, stderr
    assert "Traceback" not in stderr
    rows = {r["config"]["model"].rpartition(":")[2]: r for r in read_results(out)[0]}
    assert {name: r["status"] for name, r in rows.items()} == {
        "rank_only": "error",
        "rank_exit": "crashed",
        "rank_hang": "timeout",
        "rank_allocate": "oom",
    }
    assert "only in the rank: checkpoint missing" in rows["rank_only"]["error"]
    assert "rank 0 exited with code 9" in rows["rank_exit"]["error"]
    assert "700 MiB" in rows["rank_allocate"]["error"]
    assert all(r["config"]["params"] == 15 for r in rows.values())  # counted by the probe
    assert peak < 1 << 30, f"the process tree held {peak / 2**20:.0f} MiB"
