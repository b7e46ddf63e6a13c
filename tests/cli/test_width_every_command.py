"""No line of any command's default output (its answer, table, sentences and notes, stdout
and stderr) is wider than the terminal, at 60, 80 and 100 columns: each command run on the
bundled rounds, a raw round, a bench file and a saved topology; bench's and collectives'
own output (after their runs) drawn from recorded rows. A terminal is what rich takes for
one (``TTY_COMPATIBLE=1``, its width ``COLUMNS``); a log (piped) keeps each sentence
whole."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

from ..builders import sweep_rows
from ..mlperf.synthetic_rounds import ruleset_round

ROOT = Path(__file__).resolve().parents[2]
BENCH = str(ROOT / "tests" / "advice" / "cpu_tiny_model_gloo.jsonl")
PHB_PAIR = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPHB\t0-15\nGPU1\tPHB\t X \t0-15\n"
WIDTHS = (60, 80, 100)
COMMANDS = {
    "ingest": ["ingest", "training_results_v4.1", "--out", "tables"],
    "dataset": ["dataset", "--out", "dataset"],
    "scores": ["scores", "--round", "v4.1", "-b", "bert"],
    "scores of a raw round": ["scores", "training_results_v4.1"],
    "analyze": ["analyze"],
    "analyze --bench": ["analyze", "--bench", Path(BENCH).name],
    "energy": ["energy", "--round", "v4.0"],
    "trends": ["trends", "-b", "bert"],
    "report": ["report", "-b", "bert", "--out", "report"],
    "plan": ["plan", "-w", "bert", "-a", "h100", "-n", "8,16"],
    "advise": ["advise", "--params", "7M", "--step-ms", "20", "--interconnect", "pcie-phb"],
    "advise --bench": ["advise", "--bench", Path(BENCH).name],
    "topo --file": ["topo", "--file", "topo.txt"],
}


@pytest.fixture(scope="module")
def here(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a raw round (a result file that is no log among its files), a saved
    topology and a bench file (read by its bare name: the checkout's path, whose length is
    the machine's, is no line of the product's to fold)."""
    folder = tmp_path_factory.mktemp("width")
    (folder / Path(BENCH).name).write_text(Path(BENCH).read_text())
    built = ruleset_round("4.1.0", ["bert"]).raw("Acme/results/dgxb200_n1/bert/result_9.txt", "x")
    built.write_dir(folder)
    (folder / "topo.txt").write_text(PHB_PAIR)
    return folder


def terminal(width: int) -> dict[str, str]:
    """The environment of a terminal ``width`` columns wide, without colours."""
    return {"COLUMNS": str(width), "TTY_COMPATIBLE": "1", "NO_COLOR": "1"}


def _too_wide(text: str, width: int) -> list[str]:
    """The lines of ``text`` wider than ``width``, terminal escapes (a progress bar's,
    a colour's) left out; the lines a progress bar redrew (carriage returns) each alone."""
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)
    return [line for line in re.split(r"[\r\n]", plain) if len(line) > width]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", list(COMMANDS))
def test_no_line_of_a_default_output_is_wider_than_the_terminal(
    name: str, width: int, here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(here)
    done = CliRunner().invoke(app, COMMANDS[name], env=terminal(width))
    assert done.exit_code == 0, done.output
    assert _too_wide(done.output, width) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_the_bench_and_collectives_output_fits_too(
    width: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    """What bench prints after its runs (this sweep's table and sentences, the file's
    earlier rows and unreadable lines) and the collectives tables, from recorded rows."""
    from gpuscale.bench.results import after_sweep
    from gpuscale.bench.runner import SweepReport
    from gpuscale.bench.sweep_plan import done_sentence
    from gpuscale.cli.bench import _show_results
    from gpuscale.cli.output import Format, say, show
    from gpuscale.interconnect.shown import sweep_failures, sweep_views
    from gpuscale.tables import COLLECTIVES_COLUMNS

    for variable, value in terminal(width).items():
        monkeypatch.setenv(variable, value)
    monkeypatch.chdir(tmp_path)
    results = Path("results of an earlier sweep.jsonl")
    results.write_text(Path(BENCH).read_text() + "{cut short\n")
    sweep = json.loads(Path(BENCH).read_text().splitlines()[-1])["sweep_id"]
    _show_results(*after_sweep(results), results, sweep, 0)  # as bench shows it
    say([done_sentence(SweepReport(appended=2, measured=2), results, 1)], stderr=True)
    rows = [
        {**r, "sweep_id": "s", "count": r["size_bytes"] // 4, "dtype": "float32", "redop": "sum"}
        | {"root": -1, "algbw_gbs": 1.0, "busbw_gbs": 1.0, "time_us_p99": 1.0, "wrong": 0}
        for r in sweep_rows(12.3, 25.0)
    ]
    latest = pd.DataFrame(rows).reindex(columns=list(COLLECTIVES_COLUMNS))
    say(sweep_failures(latest))  # as `collectives` prints them
    for view in sweep_views(latest):
        show(view, Format.table)
    said = capsys.readouterr()
    assert "1 unreadable line" in said.err and "busbw" in said.out
    assert _too_wide(said.out + said.err, width) == []


@pytest.mark.parametrize("columns", ["", "60"])
def test_a_log_keeps_each_sentence_whole(
    columns: str, here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piped (whatever COLUMNS says): a log is grepped by sentence, a note is one line
    however long."""
    monkeypatch.chdir(here)
    args = COMMANDS["scores of a raw round"]
    done = CliRunner().invoke(app, args, env={"COLUMNS": columns})
    notes = [line for line in done.stderr.splitlines() if line.startswith("note: ")]
    assert notes and all(len(line) > 100 for line in notes)
    assert not any(line.startswith("  ") for line in done.stderr.splitlines())


@pytest.mark.parametrize("width", (60, 80))
def test_the_advice_answer_fits_a_width_given_piped_too(
    width: int, here: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not a terminal, ``COLUMNS`` narrower than the answer's 100: the answer (above the
    table) is wrapped at that width, as the table is drawn at it; the sentences under the
    table, a log's, stay whole (:func:`test_a_log_keeps_each_sentence_whole`)."""
    monkeypatch.chdir(here)
    done = CliRunner().invoke(app, COMMANDS["advise"], env={"COLUMNS": str(width)})
    assert done.exit_code == 0, done.output
    answer, _, table = done.stdout.partition("predicted training of")
    assert answer.count("\n") >= 4  # the answer, wrapped
    assert _too_wide(answer, width) == []
    drawn = [line for line in table.splitlines() if line[:1] in "┏┃┡│└"]
    assert drawn and _too_wide("\n".join(drawn), width) == []
