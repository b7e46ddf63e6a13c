"""Every round command on every raw round: `report`, `analyze`, `plan`, `energy` and
`trends` exit 0 without a traceback on a synthetic round of each ruleset (`energy` on a
round without power logs: 2, with one `error:` line, as any table with no row), and on a round
whose published results today's rules mostly reject (v2.1 BERT: its logs lack the
`opt_lamb_epsilon` line the current checker requires); there the commands say so in one
line with the rule and the count."""

from __future__ import annotations

import csv
import html
import io
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.mlperf.rules import benchmarks_of

from ..mlperf.synthetic_rounds import HARDWARE, ruleset_round

pytest.importorskip("mlperf_logging")
runner = CliRunner()


def _commands(root: Path, out: Path, workload: str, family: str) -> list[list[str]]:
    return [
        ["report", str(root), "-b", "all", "--out", str(out)],
        ["analyze", str(root)],
        ["plan", str(root), "-w", workload, "-a", family, "-n", "8,16,64"],
        ["energy", str(root)],
        ["trends", str(root)],
    ]


def _ran(args: list[str]) -> str:
    result = runner.invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), args
    assert "Traceback" not in result.output, (args, result.output)
    no_row = args[0] == "energy" and result.exit_code == 2 and "error: " in result.stderr
    assert result.exit_code == 0 or no_row, (args, result.output)
    return result.stderr


@pytest.fixture(scope="module")
def rejected_round(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """v2.1 with BERT's main family logged as the published round was: no
    `opt_lamb_epsilon` line, so 3 of its 4 results are unscored today."""
    rb = ruleset_round("2.1.0", ["bert", "resnet"])
    main = HARDWARE["2.1.0"][0][0]
    for rel, data in list(rb.files.items()):
        if "/bert/" in rel and f"/{main}_" in rel:
            kept = [line for line in data.decode().splitlines() if "opt_lamb_epsilon" not in line]
            rb.files[rel] = ("\n".join(kept) + "\n").encode()
    return rb.write_dir(tmp_path_factory.mktemp("v21"))


@pytest.mark.slow
def test_a_round_today_s_rules_mostly_reject(rejected_round: Path, tmp_path: Path) -> None:
    said = (
        "v2.1 bert: 3 of 4 results not scored by ruleset 2.1.0's checks as mlperf-logging "
        "applies them today, 3 for 0 opt_lamb_epsilon"
    )
    for args in _commands(rejected_round, tmp_path / "report", "bert", "A100-SXM4-80GB"):
        stderr = " ".join(_ran(args).split())
        assert stderr.count(said) == 1, (args, stderr)
    page = " ".join(html.unescape((tmp_path / "report" / "index.html").read_text()).split())
    assert said in page  # the report says it too, not only the terminal


@pytest.mark.slow
def test_a_rejected_benchmark_is_said_only_where_it_is_asked(
    rejected_round: Path, tmp_path: Path
) -> None:
    """`-b resnet` printed the line on BERT's unscored results (and the report's page held
    it): a note on a benchmark not asked for, and none on the one asked."""
    said = (
        "v2.1 bert: 3 of 4 results not scored by ruleset 2.1.0's checks as mlperf-logging "
        "applies them today"
    )
    out = tmp_path / "report"
    root = str(rejected_round)
    for args in (
        ["scores", root, "-b", "resnet"],
        ["analyze", root, "-b", "resnet"],
        ["report", root, "-b", "resnet", "--out", str(out)],
    ):
        assert said not in " ".join(_ran(args).split()), args
    assert said not in " ".join(html.unescape((out / "index.html").read_text()).split())
    for asked in ("bert", "BERT", "bert,resnet"):  # as people type it, and among others
        stderr = " ".join(_ran(["scores", root, "-b", asked]).split())
        assert stderr.count(said) == 1, (asked, stderr)
        assert "-b bert --columns" in stderr  # the benchmark whose reasons it lists


@pytest.mark.slow
@pytest.mark.parametrize("ruleset", sorted(HARDWARE))
def test_every_command_on_a_round_of_every_ruleset(tmp_path: Path, ruleset: str) -> None:
    workload = next(b for b in benchmarks_of(ruleset) if b != "minigo")
    rb = ruleset_round(ruleset, [workload])
    root = rb.write_dir(tmp_path)
    scored = runner.invoke(app, ["scores", str(root), "-f", "csv"])
    first = dict(next(csv.DictReader(io.StringIO(scored.stdout))))
    asked = _commands(root, tmp_path / "report", first["workload"], first["accelerator_family"])
    for args in asked[1:]:  # the report: tests/report/test_every_ruleset.py
        _ran(args)
