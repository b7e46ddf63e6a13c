"""Every ``gpuscale bench`` command that advice from a results file tells the user to run
(to measure a term, to firm up weak runs) runs the configuration advised on and writes to
the file advised on: a command without ``--out FILE`` writes to results.jsonl (advising
again on FILE never sees it), and one without the run's backend, batch, precision or
strategy measures another configuration (NCCL on a GPU host for CPU/gloo runs)."""

from __future__ import annotations

import html
import re
import shlex
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from gpuscale.bench.results import load_bench
from gpuscale.cli import app

HERE = Path(__file__).parent
FILES = [HERE / "cpu_tiny_model_gloo.jsonl", HERE / "h100_resnet50_bf16.jsonl"]
# the options of a command up to where its sentence goes on (`, <, ), " on a host of")
_COMMAND = re.compile(r"gpuscale bench (--models? \S+(?: --[\w-]+(?: (?!--)[^\s`<)]+)?)*)")


def _configurations(path: Path) -> set[tuple]:
    """(model, batch per device, precision, strategy, backend) of the file's ok runs."""
    table = load_bench(path).table
    ok = table[table["status"] == "ok"]
    return {
        (
            str(r["model"]),
            int(r["batch_per_device"]),
            str(r["precision"]),
            str(r["strategy"]),
            "gloo" if r["device"] == "cpu" else "nccl",
        )
        for r in ok.to_dict("records")
    }


def _said(params: dict) -> tuple:
    """The configuration a bench command's options (click's parse of them) run."""
    model = params["model"][0] if params["model"] else params["models"]
    # auto: NCCL on a GPU host (where the file's cuda runs ran), so gloo must be said
    backend = "nccl" if params["backend"] in (None, "auto") else params["backend"]
    return (model, int(params["batch"]), params["precision"], params["strategy"], backend)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
# the JSON holds the short answer's lines too (``answer``), the text the explanation
@pytest.mark.parametrize("form", [["--explain"], ["-f", "json"]], ids=["text", "json"])
def test_each_bench_command_runs_the_advised_run_into_the_file(
    path: Path, form: list[str], tmp_path: Path
) -> None:
    mine = tmp_path / "my-runs.jsonl"
    mine.write_text(path.read_text())
    result = CliRunner().invoke(app, ["advise", "--bench", str(mine), *form])
    assert result.exit_code == 0, result.output
    _check(result.output.replace('\\"', '"'), mine)


def _check(text: str, mine: Path) -> None:
    """Each bench command in ``text`` (parsed by the bench command's own parser) runs a
    configuration ``mine`` holds and writes to ``mine``."""
    commands = [c.rstrip(".,;") for c in _COMMAND.findall(text)]
    assert commands, text  # the advice on these files names commands to run
    bench = typer.main.get_command(app).commands["bench"]
    ran = _configurations(mine)
    for command in commands:
        params = bench.make_context("bench", shlex.split(command)).params
        assert params["out"] == str(mine), command
        assert _said(params) in ran, (command, ran)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_the_reports_bench_commands_run_the_advised_run_into_the_file(
    path: Path, tmp_path: Path
) -> None:
    mine = tmp_path / "my-runs.jsonl"
    mine.write_text(path.read_text())
    folder = tmp_path / "report"
    result = CliRunner().invoke(
        app, ["report", "--bench", str(mine), "--advise", "--out", str(folder)]
    )
    assert result.exit_code == 0, result.output
    _check(html.unescape((folder / "index.html").read_text()), mine)
