"""The sweep on CPU with gloo: rows, resume, failures recorded with their cause, models
that never started never recorded, two nodes through torchrun's c10d rendezvous."""

from __future__ import annotations

import json
import os
import re
import socket
import threading
from pathlib import Path

import pytest

pytest.importorskip("torch")

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.launch_events import cause
from gpuscale.bench.results import SCHEMA, bench_table, read_results
from gpuscale.bench.runner import SweepConfig, run_sweep

from ..golden import Golden

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
SIZES = {"mlp-0.2m": 199_946, "mlp-1m": 1_055_754, "cnn-0.3m": 288_746}
VIEW = "bench/launch_failures"
SUMMARY = re.compile(r"(\d+) measured, (\d+) rows? appended")  # the sweep's last line's counts


def config(out: Path, **kwargs) -> SweepConfig:
    bench = BenchConfig(backend="gloo", steps=3, warmup=1, timeout_s=kwargs.pop("timeout_s", 60))
    base = {"models": ("mlp-0.2m", "mlp-1m"), "nproc": (1, 2), "out": out, "bench": bench}
    return SweepConfig(**{**base, **kwargs})


def test_sweep_rows_are_complete_and_resume_skips(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    report = run_sweep(config(out), SIZES)
    assert report.appended == 4 and report.failures == []
    records, problems = read_results(out)
    assert problems == [] and len(records) == 4
    threads = {r["config"]["threads"] for r in records}
    assert len(threads) == 1  # the same threads per rank at every world size
    # what ran, not the options' placeholders (threads 0, global batch 64)
    assert threads == {max(1, (os.cpu_count() or 1) // 2)}
    assert all(r["config"]["global_batch"] == 8 * r["config"]["accelerators"] for r in records)
    for r in records:
        n = r["config"]["accelerators"]
        assert r["schema"] == SCHEMA and r["status"] == "ok"
        assert r["config"]["backend"] == "gloo" and r["config"]["device"] == "cpu"
        assert len(r["per_rank"]["step_ms"]) == n
        assert r["timing"]["step_ms_mean"] > 0 and r["timing"]["samples_per_s"] > 0
        assert r["flops"]["per_sample"] > 0 and r["flops"]["mfu"] is None  # no MFU on CPU
        assert (r["timing"]["comm_ms"] is None) == (n == 1)
        assert r["allreduce_bytes_per_step"] == (r["grad_bytes_per_step"] if n > 1 else 0)
        assert len(r["noise"]["global_sq"]) == (3 if n > 1 else 0)
        # each rank its own data: the local gradient is not the global one
        noise = r["noise"]
        assert all(a != b for a, b in zip(noise["local_sq"], noise["global_sq"], strict=True))
        assert (r["timing"]["plain_step_ms_mean"] is not None) == (n == 1)
    scaling = bench_scaling(bench_table(records))
    assert scaling["speedup"].notna().eq(scaling["accelerators"] > 1).all()
    assert (scaling.loc[scaling.accelerators == 1, "exposed_comm_ms"] == 0).all()
    assert (scaling.loc[scaling.accelerators == 2, "comm_ms"] > 0).all()
    # --resume skips the runs measured well; a flagged one (a few steps on a shared host
    # may be noisy) is measured again
    table = bench_table(records)
    good = len(table[~table["flagged"]])
    again = run_sweep(config(out, resume=True), SIZES)
    assert (again.appended, again.measured, again.skipped) == (4 - good, 4 - good, good)
    # without --resume a re-run measures again and appends
    rerun = run_sweep(config(out, models=("mlp-0.2m",), nproc=(1,)), SIZES)
    assert (rerun.appended, rerun.measured, rerun.skipped) == (1, 1, 0)
    assert len(read_results(out)[0]) == 5 + 4 - good


@pytest.fixture
def faulty(monkeypatch: pytest.MonkeyPatch):
    # the repository first (tests.bench.faulty_worker), then this checkout's src
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), str(ROOT / "src")]))

    def inject(fault: str) -> str:
        monkeypatch.setenv("GPUSCALE_TEST_FAULT", fault)
        return "tests.bench.faulty_worker"

    return inject


@pytest.mark.parametrize(
    "fault, status, words",
    [
        ("mlp-1m:kill", "crashed", "signal 9"),
        # rank 0 slow to say the model before finished: the kill is still the next one's
        ("mlp-1m:slowkill", "crashed", "signal 9"),
        # rank 0 slow to note the model's start: the kill is still that model's alone
        ("mlp-1m:latekill", "crashed", "signal 9"),
        ("mlp-1m:oom", "oom", "OutOfMemoryError"),
        ("mlp-1m:error", "error", "shapes (8, 3)"),
    ],
)
def test_a_failed_model_is_recorded_once_with_its_cause(
    tmp_path: Path, faulty, fault: str, status: str, words: str
) -> None:
    out = tmp_path / "results.jsonl"
    models = ("mlp-0.2m", "mlp-1m", "cnn-0.3m")
    report = run_sweep(config(out, nproc=(2,), models=models, worker=faulty(fault)), SIZES)
    records, _ = read_results(out)
    rows = {r["config"]["model"]: r for r in records}
    # the model after the failure ran in a fresh launch: never recorded as failed
    assert {m: r["status"] for m, r in rows.items()} == {
        "mlp-0.2m": "ok",
        "mlp-1m": status,
        "cnn-0.3m": "ok",
    }, {m: r.get("error") for m, r in rows.items()}
    assert words in rows["mlp-1m"]["error"] and "=====" not in rows["mlp-1m"]["error"]
    assert len(report.failures) == 1 and "mlp-1m" in report.failures[0]


def test_a_launch_that_ends_between_two_models_fails_neither(tmp_path: Path, faulty) -> None:
    """A rank killed after one model's row was written, before the next started: no model
    is recorded as failed; the models not yet run are measured in a new launch."""
    out = tmp_path / "results.jsonl"
    models = ("mlp-0.2m", "mlp-1m", "cnn-0.3m")
    fault = faulty("mlp-1m:afterkill")
    report = run_sweep(config(out, nproc=(2,), models=models, worker=fault), SIZES)
    records, _ = read_results(out)
    assert [(r["config"]["model"], r["status"]) for r in records] == [
        ("mlp-0.2m", "ok"),
        ("mlp-1m", "ok"),
        ("cnn-0.3m", "ok"),
    ]
    assert report.failures == [] and (report.appended, report.measured) == (3, 3)
    (warning,) = report.exit_warnings
    assert "between two models" in warning and "signal 9" in warning


def test_a_launch_that_fails_before_its_first_model_is_a_row_per_model(
    tmp_path: Path, faulty, golden: Golden
) -> None:
    """A row is written ("launch failed before any model started") and the cause said, not
    only that a worker exited with code 1."""
    out = tmp_path / "results.jsonl"
    report = run_sweep(config(out, nproc=(1,), worker=faulty("*:early")), SIZES)
    records, _ = read_results(out)
    assert [(r["config"]["model"], r["status"]) for r in records] == [
        ("mlp-0.2m", "error"),
        ("mlp-1m", "error"),
    ]
    (error,) = {r["error"] for r in records}  # one cause, on each model's row
    golden.check(VIEW, "the launch failed before any model", error)
    assert all(r["config"]["params"] == SIZES[r["config"]["model"]] for r in records)
    assert len(report.failures) == 2


def test_a_rank_that_dies_after_every_model_finished_fails_no_model(
    tmp_path: Path, faulty, golden: Golden
) -> None:
    """CI: on a loaded host, node 1's rank aborted (SIGABRT) leaving the process group
    after the row was written, and the sweep blamed the model. The row stays, no failure
    row is added, and the report says what happened at exit."""
    out = tmp_path / "results.jsonl"
    models = ("mlp-0.2m", "mlp-1m")
    report = run_sweep(config(out, nproc=(2,), models=models, worker=faulty("*:exit")), SIZES)
    records, _ = read_results(out)
    assert [(r["config"]["model"], r["status"]) for r in records] == [
        ("mlp-0.2m", "ok"),
        ("mlp-1m", "ok"),
    ]
    assert report.failures == []
    assert len(report.exit_warnings) == 1
    assert "signal 6" in report.exit_warnings[0]
    golden.check(VIEW, "a rank aborted after every model", report.exit_warnings[0])


ROOT_CAUSE = "Root Cause (first observed failure):"
ERRORS_DOC = "https://pytorch.org/docs/stable/elastic/errors.html"


def _failure(
    index: int, rank: str, exitcode: str, traceback: str = "", time: str = "2026-11-23_10:00:00"
) -> str:
    """One failure of a torchrun error summary, as torchelastic prints it (its lines)."""
    lines = [
        f"[{index}]:",
        f"  time      : {time}",
        "  host      : vm",
        f"  rank      : {rank}",
        f"  exitcode  : {exitcode}",
        "  error_file: <N/A>",
        *([f"  traceback : {traceback}"] if traceback else []),
    ]
    return "".join(f"{line}\n" for line in lines)


def test_the_root_cause_is_the_first_rank_that_failed(tmp_path: Path, golden: Golden) -> None:
    """torchrun lists the ranks it stopped (SIGTERM) beside the one that failed first: the
    row names the first, not a signal the others got."""
    stopped = _failure(
        1, "0 (local_rank: 0)", "-15 (pid: 1234)", "Signal 15 (SIGTERM) received by PID 1234"
    )
    first = _failure(
        0, "1 (local_rank: 1)", "7 (pid: 1235)", f"To enable traceback see: {ERRORS_DOC}"
    )
    log = f"""
[W] some warning
{"=" * 60}
gpuscale.bench.worker FAILED
{"-" * 60}
Failures:
{stopped}{"-" * 60}
{ROOT_CAUSE}
{first}{"=" * 60}
"""
    status, text = cause(tmp_path, log, "exit 1")
    assert status == "crashed"
    assert text.startswith("rank 1 ") and "code 7" in text  # the first, not rank 0's SIGTERM
    killed = log.replace("exitcode  : 7 (pid: 1235)", "exitcode  : -9 (pid: 1235)")
    said = cause(tmp_path, killed, "exit 1")[1]
    assert said.startswith("rank 1 ") and "signal 9" in said
    golden.check(VIEW, "rank 1 exited, then killed", f"{text}\n{said}")


def test_a_rank_that_lost_its_peers_is_not_said_to_have_raised_nothing(tmp_path: Path) -> None:
    """Across nodes, a node whose peer node was killed sees its own rank fail first, with
    gloo's lost connection in its error file: the row says a peer was lost, not that the
    rank exited without an exception (os._exit in the model's code)."""
    log = f"""
{ROOT_CAUSE}
{_failure(0, "1 (local_rank: 0)", "1 (pid: 4321)", time="2026-11-30_09:49:00")}{"=" * 60}
"""
    peer = "[pair.cc:553] Connection closed by peer [127.0.0.1]:32476"
    error = {"rank": 1, "type": "RuntimeError", "message": peer, "oom": False}
    (tmp_path / "error-1.json").write_text(json.dumps(error))
    status, text = cause(tmp_path, log, "exit 1")
    assert status == "crashed" and "without raising" not in text
    assert text.startswith("a rank lost its peers (a process on another node ended")
    assert text.endswith(f"rank 1: RuntimeError: {peer}")
    (tmp_path / "error-1.json").unlink()  # no record: it ended without raising
    assert "without raising an exception" in cause(tmp_path, log, "exit 1")[1]


def test_timeout_is_recorded_and_the_sweep_goes_on(tmp_path: Path, faulty) -> None:
    out = tmp_path / "results.jsonl"
    run_sweep(config(out, nproc=(2,), timeout_s=20.0, worker=faulty("mlp-0.2m:hang")), SIZES)
    records, _ = read_results(out)
    status = {r["config"]["model"]: r["status"] for r in records}
    assert status == {"mlp-0.2m": "timeout", "mlp-1m": "ok"}


def test_a_timeout_says_the_word_once(tmp_path: Path, golden: Golden) -> None:
    """The failure line is ``STATUS: MESSAGE``: the message does not repeat the status."""
    status, text = cause(tmp_path, "", "timeout")
    line = f"{status}: {text}"
    assert status == "timeout" and not text.startswith("timeout")
    assert "--timeout" in text  # the option that bounds it
    golden.check(VIEW, "a timeout", line)


def test_cause_reads_rank_records_and_never_a_separator(tmp_path: Path) -> None:
    (tmp_path / "error-1.json").write_text(
        '{"rank": 1, "type": "OutOfMemoryError", "message": "CUDA out of memory", "oom": true}'
    )
    assert cause(tmp_path, "=" * 40, "exit 1")[0] == "oom"
    empty = tmp_path / "none"
    empty.mkdir()
    status, text = cause(empty, "boom happened\n" + "=" * 40 + "\n", "exit 1")
    assert status == "crashed" and text.endswith("boom happened")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_nodes_on_localhost_through_c10d(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    endpoint = f"127.0.0.1:{_free_port()}"
    reports = {}

    def node(rank: int) -> None:
        cfg = config(
            out,
            models=("mlp-0.2m",),
            nproc=(1,),
            nnodes=2,
            node_rank=rank,
            rdzv_endpoint=endpoint,
        )
        reports[rank] = run_sweep(cfg, SIZES)

    threads = [threading.Thread(target=node, args=(r,)) for r in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    records, _ = read_results(out)
    assert [(r["config"]["accelerators"], r["config"]["nnodes"]) for r in records] == [(2, 2)]
    assert records[0]["status"] == "ok"
    assert reports[0].failures == [] and reports[1].failures == []
    # two nodes on one host share its cores: threads per rank over both nodes' ranks
    assert records[0]["config"]["threads"] == max(1, (os.cpu_count() or 1) // 2)
    # only the writer says it appended
    assert sorted(r.appended for r in reports.values()) == [0, 1]
    # one sweep: every node's summary reads the rows by the id they carry (node 0's)
    assert reports[0].sweep_id == reports[1].sweep_id == records[0]["sweep_id"]


USER_MODELS = """
import torch

def make():
    module = torch.nn.Linear(4, 3)
    return module, lambda n, d: (torch.randn(n, 4), torch.randint(0, 3, (n,)))

def broken():
    raise RuntimeError("checkpoint /nope")
"""
CHECKPOINT = "checkpoint /nope"  # the error USER_MODELS' broken factory raises


def test_a_broken_factory_is_one_error_row_and_the_others_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from gpuscale.cli import app

    (tmp_path / "usermods.py").write_text(USER_MODELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT / "src")]))
    out = tmp_path / "r.jsonl"
    args = ["bench", "--backend", "gloo", "--nproc", "1", "--steps", "2", "--warmup", "1"]
    args += ["--models", "usermods:make,usermods:broken", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output  # a run failed (its row says why)
    assert "Traceback" not in result.output
    counts = SUMMARY.search(result.output)
    assert counts and counts.groups() == ("1", "2") and "1 failed" in result.output
    records, _ = read_results(out)
    status = {r["config"]["model"]: r["status"] for r in records}
    assert status == {"usermods:make": "ok", "usermods:broken": "error"}
    error = next(r["error"] for r in records if r["status"] == "error")
    assert error.startswith("usermods:broken ") and error.endswith(f"RuntimeError: {CHECKPOINT}")
    assert next(r for r in records if r["status"] == "ok").get("error") is None


def test_a_broken_model_alone_is_still_an_error_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden: Golden
) -> None:
    """Only a model whose factory raises: its ``error`` row is written (as beside a ladder
    model), and the command exits 2 saying nothing could be built."""
    from typer.testing import CliRunner

    from gpuscale.cli import app

    (tmp_path / "usermods.py").write_text(USER_MODELS)
    monkeypatch.syspath_prepend(str(tmp_path))
    # the parameter count's child imports it as the ranks do: from the environment
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(tmp_path), str(ROOT / "src")]))
    out = tmp_path / "r.jsonl"
    args = ["bench", "--backend", "gloo", "--nproc", "1,2", "--steps", "2"]
    result = CliRunner().invoke(app, [*args, "--model", "usermods:broken", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    (built,) = [line for line in result.output.splitlines() if "could be built" in line]
    assert "usermods:broken" in built and "RuntimeError" in built  # the model and its error
    golden.check(VIEW, "no model could be built", built)
    counts = SUMMARY.search(result.output)
    assert counts and counts.groups() == ("0", "1")
    records, _ = read_results(out)
    assert [(r["config"]["model"], r["config"]["accelerators"], r["status"]) for r in records] == [
        ("usermods:broken", 1, "error")
    ]
    error = records[0]["error"]
    assert error.startswith("usermods:broken ") and error.endswith(f"RuntimeError: {CHECKPOINT}")


def test_progress_says_each_model_done_before_the_next_starts(tmp_path: Path) -> None:
    """The models of a launch run one after another: each is said done (with its row's
    step) as soon as its row is written, before the next is said started."""
    said: list[str] = []
    report = run_sweep(config(tmp_path / "r.jsonl", nproc=(1,)), SIZES, on_event=said.append)
    assert report.appended == 2
    assert [line.split(":")[0] for line in said] == [
        "started mlp-0.2m x1",
        "done mlp-0.2m x1",
        "started mlp-1m x1",
        "done mlp-1m x1",
    ]
    assert all("ms/step" in line for line in said if line.startswith("done"))
