"""A global batch past 64 micro-steps of one device, advised as one device takes it (the
reference every speedup is against: in as many micro-steps as it needs), a Run given its
own limit refusing past it with that limit, and a --collectives file holding no
collectives measurement saying what such a file holds and the command that writes it
(``gpuscale collectives --out``, an option that command has)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.calibration import Run
from gpuscale.cli import app

ASKED = ("--params", "7e9", "--step-ms", "900")


def _refused(*args: str) -> str:
    result = CliRunner().invoke(app, ["advise", *ASKED, *args], env={"COLUMNS": "200"})
    assert result.exit_code != 0
    assert "Traceback" not in result.output
    return " ".join(result.output.split())


def _accum(*args: str) -> dict[int, tuple[int, int, int]]:
    """(global batch, per-device batch, micro-steps) of each count advised."""
    result = CliRunner().invoke(app, ["advise", *ASKED, *args, "-f", "json"])
    assert result.exit_code == 0, result.output
    table = json.loads(result.output)["predictions"]
    return {
        r["accelerators"]: (r["global_batch"], r["batch_per_device"], r["accum"]) for r in table
    }


def test_a_global_batch_past_64_micro_steps_of_one_device_is_advised() -> None:
    """One device, the reference of every speedup, takes any global batch in micro-steps
    (65,536 at 32 a device: 2,048), with or without a transformer's shape."""
    rows = _accum("--batch", "32", "--global-batch", "65536")
    assert rows[1] == (65536, 32, 2048) and rows[8] == (65536, 32, 256)


def test_four_nodes_hold_a_global_batch_of_1024() -> None:
    """32 devices x 4 a device x 8 micro-steps = 1,024; one device takes it in 256."""
    nodes = ("--nodes", "4", "--gpus-per-node", "8", "--interconnect", "nvlink4")
    rows = _accum(
        *("--batch", "4", "--device-name", "H100", *nodes, "--inter-node", "ib-ndr400"),
        *("--strategy", "fsdp", "--global-batch", "1024", "--workload", "llama2_70b_lora"),
    )
    assert rows[1] == (1024, 4, 256) and rows[32] == (1024, 4, 8)
    assert sorted(rows) == [1, 2, 4, 8, 16, 32]


def test_the_python_api_takes_the_same_global_batch() -> None:
    advice = gpuscale.advise(params=7e9, step_ms=900, batch=32, global_batch=65536)
    one = advice.table.iloc[0]
    assert (one["accelerators"], one["accum"], one["global_batch"]) == (1, 2048, 65536)


def test_global_batch_at_the_limit_is_advised() -> None:
    args = ["advise", *ASKED, "--batch", "32", "--global-batch", "2048", "-f", "json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output


def test_run_refuses_a_global_batch_over_its_limit() -> None:
    with pytest.raises(ValueError, match="at most 256"):
        Run(batch=8, max_accum=4, max_batch=64, global_batch=257)


def test_not_a_collectives_file_says_what_it_should_hold(tmp_path: Path, golden) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    said = _refused("--batch", "32", "--collectives", str(path))
    assert "gpuscale collectives --out FILE" in said and "all_reduce" in said
    golden.check(
        "advice/refusals",
        "advise --collectives on a file of no measurement",
        said,
        paths={str(tmp_path): "<tmp>"},
    )
    # the command named has the option named
    help_text = CliRunner().invoke(app, ["collectives", "--help"], env={"COLUMNS": "200"})
    assert "--out" in help_text.output
