"""Every command gpuscale suggests pastes and runs: walked as a user would, with a results
file, a model and a round in folders whose names hold a space, each ``gpuscale ...`` the
output suggests (in backticks: a command outside them is refused as unmarked) is split as
a shell splits it and run; a bench or collectives suggestion (they measure hardware) is
parsed by the command's own parser, and the model file it names must exist."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from gpuscale.cli import app

from ..mlperf.synthetic_rounds import ruleset_round

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = "ingest|dataset|scores|analyze|energy|trends|report|bench|collectives|topo|advise|plan"
SUGGESTED = re.compile(r"`(gpuscale [^`]+)`")
# A command with its options outside backticks: a suggestion not marked as one
UNMARKED = re.compile(rf"(?<![`\w/.-])gpuscale (?:{COMMANDS})\b[^`\n]*? --?[a-z]")
MEASURE = {"bench", "collectives"}  # parsed, not run: they launch processes on devices
runner = CliRunner()


def suggestions(text: str) -> list[str]:
    """The commands ``text`` suggests; an AssertionError for one not in backticks."""
    outside = SUGGESTED.sub("", text)
    assert not UNMARKED.search(outside), f"a command outside backticks: {UNMARKED.search(outside)}"
    return SUGGESTED.findall(text)


def pastes_and_runs(command: str, cwd: Path) -> None:
    """``command`` split as a shell splits it, then run (or, for MEASURE, parsed)."""
    argv = shlex.split(command)
    assert argv[0] == "gpuscale", command
    if argv[1] in MEASURE:
        group = get_command(app)
        sub = group.get_command(group.make_context("gpuscale", argv[1:]), argv[1])
        try:
            params = sub.make_context(argv[1], argv[2:]).params
        except Exception as exc:  # click's usage error, or the one-line exit it becomes
            raise AssertionError(f"{command}: does not parse ({exc})") from None
        for spec in params.get("model") or ():
            if ".py:" in spec:
                assert (cwd / spec.rsplit(":", 1)[0]).is_file(), f"{command}: no file {spec}"
        return
    done = runner.invoke(app, argv[1:])
    assert "no such option" not in done.output and "Got unexpected extra" not in done.output
    assert done.exit_code in (0, 1), f"{command}\n{done.output}"


@pytest.fixture(scope="module")
def walk(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder ``my dir`` with a results file of a model in ``my models/tiny gpt.py`` (one
    line unreadable, as a crash leaves one), and a raw round with problems."""
    root = tmp_path_factory.mktemp("walk") / "my dir"
    (root / "my models").mkdir(parents=True)
    model = root / "my models" / "tiny gpt.py"
    model.write_text((ROOT / "tests" / "bench" / "linreg.py").read_text())
    rows = (ROOT / "tests" / "advice" / "cpu_tiny_model_gloo.jsonl").read_text()
    rows = rows.replace("/tmp/w/mymodel.py:make", f"{model}:make")
    (root / "my results.jsonl").write_text(rows + "{not json\n")
    built = ruleset_round("4.1.0", ["bert"]).raw("Acme/results/dgxb200_n1/bert/result_9.txt", "x")
    built.write_dir(root)
    return root


def _walk(args: list[str]) -> str:
    done = runner.invoke(app, args)
    assert done.exit_code in (0, 1), done.output
    return done.output


@pytest.mark.parametrize(
    "args",
    [
        ["analyze", "--bench", "{dir}/my results.jsonl"],
        ["analyze", "--bench", "{dir}/my results.jsonl", "--explain"],
        ["report", "--bench", "{dir}/my results.jsonl", "--out", "{dir}/the report"],
        ["scores", "{dir}/training_results_v4.1"],
        ["analyze", "{dir}/training_results_v4.1", "-b", "bert"],
        ["analyze", "--bench", "{dir}/no results.jsonl"],
        ["analyze", "--bench", "{dir}/my models"],
    ],
    ids=lambda args: " ".join(args).replace("{dir}/", ""),
)
def test_every_suggestion_pastes_and_runs(
    walk: Path, args: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # what a suggestion writes (ingest's tables) lands here
    text = runner.invoke(app, [a.replace("{dir}", str(walk)) for a in args]).output
    found = suggestions(text)
    for command in found:
        pastes_and_runs(command, walk)


def test_the_bench_summary_suggests_a_command_that_runs(walk: Path, capsys) -> None:
    """After a sweep into a file with earlier rows and a line cut short: both are said
    with the command that lists them."""
    from gpuscale.bench.results import after_sweep
    from gpuscale.cli.bench import _show_results

    path = walk / "my results.jsonl"
    _show_results(*after_sweep(path), path, "a sweep of none of these rows", 0)
    said = capsys.readouterr()
    found = suggestions(said.out + said.err)
    assert len(found) == 2 and all("'" in command for command in found)  # the path, quoted
    for command in found:
        pastes_and_runs(command, walk)


@pytest.mark.parametrize("explain", [[], ["--explain"]], ids=["answer", "explain"])
def test_the_advice_suggestions_paste_and_run(walk: Path, explain: list[str]) -> None:
    text = _walk(["advise", "--bench", str(walk / "my results.jsonl"), *explain])
    found = suggestions(text)
    assert found
    for command in found:
        pastes_and_runs(command, walk)


def test_a_command_outside_backticks_or_unquoted_is_caught(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="outside backticks"):
        suggestions("earlier rows: gpuscale analyze --bench r.jsonl reads them all")
    (tmp_path / "my models").mkdir()
    with pytest.raises(AssertionError, match="does not parse"):
        pastes_and_runs("gpuscale bench --model my models/tiny.py:make --nproc 1", tmp_path)
    with pytest.raises(AssertionError, match=r"no file my models/tiny\.py:make"):
        pastes_and_runs("gpuscale bench --model 'my models/tiny.py:make' --nproc 1", tmp_path)
    with pytest.raises(AssertionError, match="does not parse"):
        pastes_and_runs("gpuscale bench --nproc 1 --out my results.jsonl", tmp_path)
    assert json.loads(json.dumps(suggestions("run `gpuscale scores --round v4.1`"))) == [
        "gpuscale scores --round v4.1"
    ]
