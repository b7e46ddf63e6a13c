"""What `gpuscale collectives` refuses before it launches, as `bench` does, and what it
says when a launch dies: one line naming the option, exit 2, no
results file left behind. Nothing here runs a real sweep (a refusal missed would run a
tiny one: 1 KiB, one call)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")

from gpuscale.bench import collectives_sweep, runner
from gpuscale.bench.collectives_config import CollectivesConfig
from gpuscale.bench.collectives_sweep import SweepError, run_collectives
from gpuscale.cli import app

from ..golden import Golden

cli = CliRunner()
TINY = ["--max-bytes", "1K", "--iters", "1", "--warmup", "0"]
GLOO = CollectivesConfig(backend="gloo", max_bytes=1024)
VIEW = "bench/collectives_refusals"


def fake_launch(monkeypatch: pytest.MonkeyPatch, script: str) -> None:
    """torchrun replaced by ``python -c SCRIPT`` (the worker's flags passed to it)."""
    command = [sys.executable, "-c", script]
    monkeypatch.setattr(collectives_sweep, "torchrun_command", lambda *a: command)


def refused(tmp_path: Path, *args: str) -> str:
    """The one line `collectives ARGS` exits 2 with; no results file written."""
    out = tmp_path / "c.jsonl"
    # ARGS replace TINY's options of the same name (an option given twice is refused)
    given = set(args[::2]) if len(args) % 2 == 0 else set(args)
    tiny = [v for k, v in zip(TINY[::2], TINY[1::2], strict=True) if k not in given for v in (k, v)]
    result = cli.invoke(app, ["collectives", *tiny, *args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and not out.exists()
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.fixture
def no_cuda(monkeypatch: pytest.MonkeyPatch) -> None:
    """A host where torch sees no CUDA device."""

    def kind(backend: str) -> str:
        return "cpu"

    for module in (runner, collectives_sweep):
        monkeypatch.setattr(module, "device_kind", kind)


def test_nccl_without_cuda_is_refused_as_bench_refuses_it(
    no_cuda: None, tmp_path: Path, golden: Golden
) -> None:
    line = refused(tmp_path, "--backend", "nccl", "--nproc", "2")
    bench = cli.invoke(app, ["bench", "--backend", "nccl", "--out", str(tmp_path / "b.jsonl")])
    assert bench.exit_code == 2 and bench.output.strip() == line  # as bench refuses it
    golden.check(VIEW, "nccl without CUDA", line)


def test_more_cpu_processes_than_cores_need_oversubscribe(
    no_cuda: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, golden: Golden
) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    line = refused(tmp_path, "--backend", "gloo", "--nproc", "2")
    assert "1 core" in line and "--oversubscribe" in line  # the count and the way out
    golden.check(VIEW, "2 processes on 1 core", line)
    # with --oversubscribe the check lets it through (to the launch, faked here)
    monkeypatch.setattr(
        collectives_sweep, "torchrun_command", lambda *a: [sys.executable, "-c", ""]
    )
    with pytest.raises(SweepError, match="no measurement"):
        run_collectives(
            CollectivesConfig(backend="gloo"), tmp_path / "o.jsonl", 2, oversubscribe=True
        )
    result = cli.invoke(app, ["collectives", "--help"])
    assert "--oversubscribe" in result.output


def test_a_list_of_world_sizes_is_refused(tmp_path: Path, golden: Golden) -> None:
    line = refused(tmp_path, "--backend", "gloo", "--nproc", "1,2")
    assert line.startswith("error: --nproc 1,2:")
    golden.check(VIEW, "--nproc 1,2", line)


def test_an_unknown_gpu_is_refused_with_the_closest(tmp_path: Path, golden: Golden) -> None:
    line = refused(tmp_path, "--backend", "gloo", "--nproc", "2", "--gpu", "Z999")
    assert line.startswith("error: --gpu Z999:") and "H100" in line  # the known ones listed
    golden.check(VIEW, "--gpu Z999", line)
    assert "'H100'" in refused(tmp_path, "--backend", "gloo", "--gpu", "h10")  # the closest
    topo = tmp_path / "topo.txt"
    topo.write_text("\tGPU0\tGPU1\nGPU0\t X \tNV12\nGPU1\tNV12\t X \n")
    result = cli.invoke(app, ["topo", "--file", str(topo), "--gpu", "Z999"])
    assert result.exit_code == 2 and result.output.strip() == line  # as collectives says it
    assert cli.invoke(app, ["topo", "--file", str(topo), "--gpu", "A100"]).exit_code == 0


def test_an_empty_collective_name_is_said_as_such(tmp_path: Path, golden: Golden) -> None:
    ops = "all_reduce,,broadcast"
    line = refused(tmp_path, "--backend", "gloo", "--ops", ops)
    assert line.startswith(f"error: --ops {ops}:")  # the option and its value
    assert "none given" not in line and "empty" in line
    golden.check(VIEW, "--ops all_reduce,,broadcast", line)


def test_a_message_too_large_for_the_host_is_refused_up_front(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, golden: Golden
) -> None:
    monkeypatch.setattr(collectives_sweep, "available_memory", lambda: 3 << 30)  # 3 GiB free
    line = refused(tmp_path, "--backend", "gloo", "--nproc", "2", "--max-bytes", "1G")
    # 2 ranks x 2 buffers of 1 GiB (all-reduce: the message and the result checked) need
    # 4 GiB; 3 GiB free hold 2 x 2 buffers of 768 MiB
    assert "4 GiB" in line and "3 GiB" in line and "768 MiB" in line
    golden.check(VIEW, "--max-bytes 1G on 3 GiB free", line)


KILLED = """\
[W1124 torch/distributed/elastic/multiprocessing/api.py] Sending process 11 closing signal SIGTERM
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
============================================================
gpuscale.bench.collectives FAILED
------------------------------------------------------------
Failures:
  <NO_OTHER_FAILURES>
------------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-11-24_03:00:00
  host      : vm
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 12)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 12
============================================================
"""


def test_a_rank_killed_by_the_kernel_is_said_so_and_leaves_no_empty_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, golden: Golden
) -> None:
    """torchrun's block (a rank SIGKILLed, as the kernel's OOM killer does) read as one
    line; the results file this run created and wrote nothing to is removed."""
    script = f"import sys; sys.stderr.write({KILLED!r}); sys.exit(1)"
    monkeypatch.setattr(
        collectives_sweep, "torchrun_command", lambda *a: [sys.executable, "-c", script]
    )
    out = tmp_path / "c.jsonl"
    with pytest.raises(SweepError) as caught:
        run_collectives(CollectivesConfig(backend="gloo", max_bytes=1024), out, 2)
    said = str(caught.value)
    assert "rank 1" in said and "signal 9" in said and "\n" not in said  # one line
    golden.check(VIEW, "a rank killed by SIGKILL", said)
    assert not out.exists()
    out.write_text("")  # a file that was there before is the user's: kept
    with pytest.raises(SweepError):
        run_collectives(GLOO, out, 2)
    assert out.exists()
