"""The comma lists of `bench` and `collectives` (a user walk): an empty item (`1,,2`,
`1,2,`) is refused in one line naming the option, as `1.5` is, never run as if it were
not there; a misspelt collective gets the closest name, as other options do; and
`--gpu` without the saved topology it names is refused rather than ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")

from gpuscale.cli import app

cli = CliRunner()
BENCH = ["bench", "--backend", "gloo", "--steps", "1", "--warmup", "1"]
COLLECTIVES = ["collectives", "--backend", "gloo", "--max-bytes", "1K", "--iters", "1"]


def refused(tmp_path: Path, *args: str) -> str:
    """The one line ARGS exit 2 with; nothing written."""
    out = tmp_path / "r.jsonl"
    result = cli.invoke(app, [*args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert not out.exists()
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    return lines[0]


@pytest.mark.parametrize("nproc", ["1,,2", "1,2,", ",1"])
def test_bench_refuses_an_empty_count(tmp_path: Path, nproc: str) -> None:
    line = refused(tmp_path, *BENCH, "--models", "mlp-0.2m", "--nproc", nproc)
    assert line.startswith(f"error: --nproc {nproc}: an empty count between commas")


def test_bench_refuses_an_empty_model_name(tmp_path: Path) -> None:
    line = refused(tmp_path, *BENCH, "--nproc", "1", "--models", "mlp-0.2m,")
    assert line.startswith("error: --models mlp-0.2m,: an empty name between commas")


@pytest.mark.parametrize("option, value", [("--nproc", "2,"), ("--ops", "all_reduce,")])
def test_collectives_refuses_an_empty_item(tmp_path: Path, option: str, value: str) -> None:
    line = refused(tmp_path, *COLLECTIVES, option, value)
    assert line.startswith(f"error: {option} {value}: an empty ")


def test_a_misspelt_collective_gets_the_closest(tmp_path: Path) -> None:
    line = refused(tmp_path, *COLLECTIVES, "--ops", "all_reduse")
    assert "(did you mean 'all_reduce'?)" in line


@pytest.mark.parametrize("command", [COLLECTIVES, ["topo"]], ids=["collectives", "topo"])
def test_gpu_without_a_saved_topology_is_refused(tmp_path: Path, command: list[str]) -> None:
    args = [*command, "--gpu", "A100"]
    if command[0] == "collectives":
        line = refused(tmp_path, *args)
    else:
        result = cli.invoke(app, args)
        assert result.exit_code == 2, result.output
        line = result.output.strip()
    assert line.startswith("error: --gpu A100:") and "--topo-file" in line
