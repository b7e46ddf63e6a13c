"""A refusal that names a path the user gave (or one made from it) names it shell-quoted,
as the suggested commands do: with a space in it, the message shows where the path ends
and the path pastes whole. One line on stderr, a non-zero exit, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

runner = CliRunner()
BENCH_ONE = ["--backend", "gloo", "--nproc", "1", "--models", "mlp-0.2m", "--steps", "1"]

CASES = {
    "a round folder not there": (["ingest", "my results"], "'my results': no such file"),
    "a folder of no results": (["scores", "no logs"], "no MLPerf results in 'no logs':"),
    "a results file not there": (
        ["analyze", "--bench", "my runs.jsonl"],
        "'my runs.jsonl': no such results file",
    ),
    "a topology file not there": (
        ["advise", "-w", "bert", "--topo", "my topo.txt"],
        "'my topo.txt': no such topology file",
    ),
    # a folder where a file is read: each file the commands read says so alike
    "a folder given as a results file": (
        ["analyze", "--bench", "no logs"],
        "'no logs' is a folder: give a results file in it",
    ),
    "a folder given as a collectives file": (
        ["advise", "--params", "7M", "--step-ms", "9", "--collectives", "no logs"],
        "'no logs' is a folder: give a collectives file in it (`gpuscale collectives --out "
        "'no logs/collectives.jsonl'` writes one)",
    ),
    "a folder given as a topology file": (
        ["topo", "--file", "no logs"],
        "'no logs' is a folder: give a saved `nvidia-smi topo -m` in it",
    ),
    "an output folder's folder not there": (
        ["report", "--out", "no such/page"],
        "--out 'no such/page': its folder 'no such' does not exist",
    ),
    "a results file named as a folder": (
        ["bench", *BENCH_ONE, "--out", "my runs/"],
        "--out 'my runs/': ends with /",
    ),
}


@pytest.mark.parametrize(("argv", "said"), list(CASES.values()), ids=list(CASES))
def test_a_path_with_a_space_is_named_quoted(
    argv: list[str], said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = tmp_path / "my work"  # run from a folder with a space, as a user would
    (here / "no logs").mkdir(parents=True)
    monkeypatch.chdir(here)
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert said in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.output
    assert not (here / "my runs").exists() and not (here / "no such").exists()  # none written


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["analyze", "v5.0"], "(a round? give it with --round v5.0)"),
        (["scores", "4.1"], "(a round? give it with --round v4.1)"),  # no v, as typed
        (["ingest", "v41"], "`gpuscale dataset --round v4.1` writes"),  # ingest reads folders
        # every round typed, each as --round takes it (repeatable), not the first alone
        (["analyze", "v5.0", "v4.1"], "(rounds? give them with --round v5.0 --round v4.1)"),
        (["ingest", "v5.0", "4.1"], "`gpuscale dataset --round v5.0 --round v4.1` writes"),
        # a results file that is not there, named as a round: the same hint, not `bench --out`
        (["analyze", "--bench", "v5.0"], "(a round? give it with --round v5.0)"),
        (["report", "--bench", "v5.0"], "(a round? give it with --round v5.0)"),
        # advise takes no --round: the command that reads one
        (["advise", "--bench", "v5.0"], "(a round? `gpuscale analyze --round v5.0` reads it)"),
        (
            ["advise", "--params", "7b", "--step-ms", "9", "--collectives", "v5.0"],
            "(a round? `gpuscale analyze --round v5.0` reads it)",
        ),
    ],
)
def test_a_round_typed_where_a_path_goes_is_offered_its_option(
    argv: list[str], said: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and said in result.stderr, result.stderr
    assert len(result.stderr.splitlines()) == 1 and "Traceback" not in result.output
