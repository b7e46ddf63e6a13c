"""Issue 38: every input bounded by design. Numbers out of range or not finite are refused
where they are parsed (a clear message, exit 2, never a traceback); device lists are
bounded before they are built; results, sweeps and topology files are read within a stated
size (``/dev/zero`` and a 1 GB file end with a message, under 1 GB of memory); the Python
API says which argument has the wrong type."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.request import AdviceRequest
from gpuscale.cli import app
from gpuscale.planning.request import PlanRequest

from .builders import bench_record, write_jsonl

SRC = str(Path(__file__).resolve().parents[1] / "src")
NUMBERS = ["--params", "7M", "--step-ms", "20"]


@pytest.mark.parametrize(
    "args, words",
    [
        (["advise", "--params", "7M", "--step-ms", "1e300"], "--step-ms 1e300: must be"),
        (["advise", *NUMBERS, "--bucket-mb", "1e-310"], "from 1/1024 (1 KiB)"),
        (["advise", *NUMBERS, "--batch", "99999999999999999999999"], "at most 16,777,216"),
        # the value as typed (it read 1e+308; 1e400 read inf; a user walk)
        (["advise", *NUMBERS, "--price", "1e308"], "--price 1e308: must be"),
        (["advise", *NUMBERS, "--nodes", "100000", "--gpus-per-node", "4096"], "devices"),
        (["advise", *NUMBERS, "--latency-us", "inf"], "--latency-us inf: must be"),
        (["plan", "-w", "bert", "-a", "H100", "--price", "1e308"], "--price 1e308: must"),
        (["plan", "-w", "bert", "-a", "H100", "--power-w", "nan"], "--power-w nan: must"),
        # a device drawing 0 W cannot run: it gave 0 kWh, "Power: given" (a user walk)
        (["plan", "-w", "bert", "-a", "H100", "--power-w", "0"], "--power-w 0: must be"),
        (["advise", *NUMBERS, "--power-w", "0"], "--power-w 0: must be a number above 0"),
        (["plan", "-w", "bert", "-a", "H100", "-n", "²"], "'²' is not a whole number"),
        (["plan", "-w", "bert", "-a", "H100", "-n", "1-100000000:1"], "up to 1,000,000"),
        (["plan", "-w", "bert", "-a", "H100", "-n", "1-1000000:1"], "at most 1,000"),
        (["bench", "--timeout", "inf", "--models", "mlp-0.2m"], "--timeout inf: must be"),
        (["bench", "--bucket-mb", "1e-310", "--models", "mlp-0.2m"], "--bucket-mb 1e-310: must"),
        (["bench", "--nproc", "²", "--models", "mlp-0.2m"], "--nproc ²: must be whole numbers"),
        # said as typed, not as Python ("got --batch None"), and the name meant (a user walk)
        (["advise", "--step-ms", "2", "--step-ms", "3"], "(got none)"),
        (["analyze", "--round", "v4.1", "--reference", "famly"], "(did you mean 'family'?)"),
        (["bench", "--min-params", "5M", "--max-params", "1M"], "--min-params 5M: is above"),
        # an option of the other scaling was ignored without a word (a user walk)
        (
            ["bench", "--global-batch", "40", "--models", "mlp-0.2m"],
            "--global-batch 40: applies to strong scaling: add --strong",
        ),
        # given as its default under --strong, 64, it was ignored alike
        (
            ["bench", "--global-batch", "64", "--models", "mlp-0.2m"],
            "--global-batch 64: applies to strong scaling: add --strong",
        ),
        (
            ["bench", "--strong", "--batch", "4", "--models", "mlp-0.2m"],
            "--batch 4: is weak scaling's per-device batch",
        ),
        # torchrun crashed after a row was written (port), or waited without end (no port)
        (
            [
                "bench",
                "--nnodes",
                "2",
                "--rdzv-endpoint",
                "localhost:99999",
                "--models",
                "mlp-0.2m",
            ],
            "--rdzv-endpoint localhost:99999: must be HOST:PORT",
        ),
        (
            ["bench", "--nnodes", "2", "--rdzv-endpoint", "foo", "--models", "mlp-0.2m"],
            "--rdzv-endpoint foo: must be HOST:PORT",
        ),
    ],
)
def test_a_number_out_of_range_is_one_clear_line(args: list[str], words: str) -> None:
    started = time.monotonic()
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert words in result.output and "Traceback" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    assert time.monotonic() - started < 30  # refused before any list or model is built


def test_a_rendezvous_host_without_an_address_is_refused_before_anything_runs(
    tmp_path: Path,
) -> None:
    """torchrun waited for it without end; now one line, no row, no launch."""
    out = tmp_path / "r.jsonl"
    args = ["bench", "--nnodes", "2", "--rdzv-endpoint", "nohost.invalid:29500"]
    result = CliRunner().invoke(app, [*args, "--models", "mlp-0.2m", "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "cannot resolve nohost.invalid" in result.output and "Traceback" not in result.output
    assert not out.exists() or out.stat().st_size == 0


@pytest.mark.parametrize(
    "call, kind, words",
    [
        (lambda: gpuscale.plan(workload="bert", accelerator="H100", devices=[math.inf]),
         ValueError, "inf is not"),
        (lambda: gpuscale.plan(workload="bert", accelerator="H100", devices=[8.7]),
         ValueError, "8.7 is not"),
        (lambda: gpuscale.plan(workload=123, accelerator="H100"), TypeError, "workload"),
        (lambda: gpuscale.advise(bench=pd.DataFrame()), ValueError, "lacks the column"),
        (lambda: gpuscale.advise(bench=123), TypeError, "bench must be"),
        # two names for the link: `link` won and nvlink4 was dropped without a word
        (lambda: gpuscale.advise(params=7e6, step_ms=2, interconnect="nvlink4",
                                 link="pcie-phb"), TypeError, "give the link once"),
        (lambda: AdviceRequest(params="7M", step_ms=20), TypeError, "give 7e6"),
        (lambda: AdviceRequest(params=7e6, step_ms=20, batch=8.5), TypeError, "whole"),
        (lambda: PlanRequest(workload="bert", accelerator="H100", devices="8,16",
                             devices_per_node=True), TypeError, "devices_per_node"),
    ],
)  # fmt: skip
def test_the_api_says_which_argument_is_wrong(call, kind: type, words: str) -> None:
    with pytest.raises(kind, match=words):
        call()


def test_numbers_read_from_a_table_are_numbers() -> None:
    """A count or size taken from a pandas/numpy table (numpy int64/float64) is a number,
    not a type error (the report plans the counts of a table)."""
    import numpy as np

    request = PlanRequest(workload="bert", accelerator="H100", devices=[np.int64(8), 16])
    assert request.devices == (8, 16)
    advice = AdviceRequest(params=np.float64(7e6), step_ms=np.float64(2.0), batch=np.int64(64))
    assert advice.batch == 64
    with pytest.raises(ValueError, match=r"8\.5"):
        PlanRequest(workload="bert", accelerator="H100", devices=[np.float64(8.5)])


# Runs its arguments as a child and prints the child's peak resident memory (KiB). A
# process's peak on Linux starts from its starter's peak at the fork (the memory it was
# forked with is counted at exec): started from this small process, not from the test's
# (a pytest worker that has run many tests holds a gigabyte), it is the command's own.
_PEAK_OF_CHILD = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, timeout=300).returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    "sys.exit(code)\n"
)


def _measured(command: list[str], cwd: Path) -> tuple[int, str, int]:
    """Exit code, stderr and peak resident memory (bytes) of ``gpuscale COMMAND``."""
    env = {**os.environ, "PYTHONPATH": SRC}
    argv = [sys.executable, "-c", _PEAK_OF_CHILD, sys.executable, "-m", "gpuscale.cli", *command]
    with tempfile.TemporaryFile() as err:
        proc = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=err)
        err.seek(0)
        peak_kib = int(proc.stdout.decode().strip() or 0)
        return proc.returncode, err.read().decode(errors="replace"), peak_kib * 1024


@pytest.mark.slow
@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
@pytest.mark.parametrize(
    "command, words",
    [
        (["analyze", "--bench", "/dev/zero"], "holds more than 64 MiB of results"),
        (["advise", "--bench", "/dev/zero"], "holds more than 64 MiB of results"),
        (["advise", *NUMBERS, "--topo", "/dev/zero"], "not a saved `nvidia-smi topo -m`"),
        (["advise", *NUMBERS, "--collectives", "/dev/zero"], "collectives files are read up to"),
        (["topo", "--file", "/dev/zero"], "not a saved `nvidia-smi topo -m`"),
    ],
)
def test_an_endless_input_ends_with_a_message(tmp_path: Path, command: list[str], words: str):
    code, stderr, peak = _measured(command, tmp_path)
    assert code == 2, stderr
    assert words in stderr and "Traceback" not in stderr
    assert peak < 1 << 30, f"{peak / 2**20:.0f} MiB"


@pytest.mark.slow
def test_a_1_gb_results_file_is_refused_with_the_rows_read(tmp_path: Path) -> None:
    rows = [bench_record(f"m{k}", 10_000 * (k + 1), 1, 100.0) for k in range(200)]
    path = write_jsonl(tmp_path / "big.jsonl", rows)
    with path.open("r+b") as handle:  # then a gigabyte (sparse: no disk used)
        handle.truncate(1 << 30)
    code, stderr, peak = _measured(["analyze", "--bench", str(path)], tmp_path)
    assert code == 2, stderr
    assert "holds more than 64 MiB of results (read 200 rows" in stderr
    assert peak < 1 << 30, f"{peak / 2**20:.0f} MiB"
