"""A command given several input files that are not there names every one in its one-line
refusal, each as its reader says it, before reading any: a user fixes them all at once,
not one per run (``advise --bench results.jsonl --collectives collectives.jsonl`` named
only the sweep)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.mlperf.load import read_paths
from gpuscale.sources import SourceError
from gpuscale.tables.inputs import MissingInputsError

runner = CliRunner()
RESULTS = "results.jsonl: no such results file (`gpuscale bench --out results.jsonl` writes one)"
SWEEP = "collectives.jsonl: no such collectives file"
TOPO = "topo.txt: no such topology file"

CASES = {
    "advise: the sweep and the results": (
        ["advise", "--bench", "results.jsonl", "--collectives", "collectives.jsonl"],
        [SWEEP, RESULTS],
    ),
    "advise: the topology and the results": (
        ["advise", "--bench", "results.jsonl", "--topo", "topo.txt"],
        [TOPO, RESULTS],
    ),
    "advise: all three": (
        [
            "advise",
            "--bench",
            "results.jsonl",
            "--topo",
            "topo.txt",
            "--collectives",
            "collectives.jsonl",
        ],
        [SWEEP, TOPO, RESULTS],
    ),
    "analyze: two round folders": (
        ["analyze", "round a", "round b"],
        ["'round a': no such file or directory", "'round b': no such file or directory"],
    ),
    "analyze: a round folder and the results": (
        ["analyze", "round a", "--bench", "results.jsonl"],
        ["'round a': no such file or directory", RESULTS],
    ),
    # the results file refused before the bundled round is read, not after
    "analyze: a round and the results": (
        ["analyze", "--round", "v4.1", "round a", "--bench", "results.jsonl"],
        ["'round a': no such file or directory", RESULTS],
    ),
    "report: a round folder and the results": (
        ["report", "round a", "--bench", "results.jsonl", "--out", "page"],
        ["'round a': no such file or directory", RESULTS],
    ),
    "scores: two round folders": (
        ["scores", "round a", "round b"],
        ["'round a': no such file or directory", "'round b': no such file or directory"],
    ),
}


@pytest.mark.parametrize(("argv", "said"), list(CASES.values()), ids=list(CASES))
def test_every_missing_input_is_named_in_one_refusal(
    argv: list[str], said: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    at = [lines[0].find(s) for s in said]
    assert -1 not in at, (said, lines[0])
    assert at == sorted(at), lines[0]  # in the order the command reads them
    assert not (tmp_path / "page").exists()  # nothing written


def test_rounds_typed_as_paths_are_told_the_option_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["analyze", "v5.0", "v4.1"])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        "error: v5.0: no such file or directory; v4.1: no such file or directory "
        "(rounds? give them with --round v5.0 --round v4.1)"
    )


def test_one_missing_file_is_said_as_its_reader_says_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the sweep missing, beside a topology that is there: the sweep alone."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "topo.txt").write_text("no matrix\n")
    argv = ["advise", "--topo", "topo.txt", "--collectives", "collectives.jsonl"]
    result = runner.invoke(app, argv)
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"error: {SWEEP} (`gpuscale collectives --out FILE` writes one)"
    )


def test_the_library_says_them_all_as_a_value_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(MissingInputsError) as raised:
        gpuscale.advise(bench="results.jsonl", collectives="collectives.jsonl")
    assert isinstance(raised.value, ValueError)
    assert SWEEP in str(raised.value) and RESULTS.split(" (")[0] in str(raised.value)
    with pytest.raises(SourceError) as refused:
        read_paths([Path("round a"), Path("round b")])
    assert "'round a': no such" in str(refused.value)
    assert "'round b': no such" in str(refused.value)
