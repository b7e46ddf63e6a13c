"""What a narrow table says about its dropped columns is true: ``-f csv`` prints the number
of columns it says, and ``--all-columns`` the number it says."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[2] / "src")
RUN = "import sys; sys.argv = ['gpuscale', *sys.argv[1:]]; from gpuscale.cli import main; main()"
ASK = ("scores", "--round", "v4.1", "-b", "bert")


def _gpuscale(*argv: str) -> str:
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "100"}
    done = subprocess.run(
        [sys.executable, "-c", RUN, *argv], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_scores_says_how_many_columns_csv_and_all_columns_give() -> None:
    """CSV is lossless: every column of the table, as many as --all-columns names."""
    said = " ".join(_gpuscale(*ASK).split())
    found = re.search(r"-f csv prints every column; --all-columns for all (\d+)", said)
    assert found, said[-300:]
    every = int(found.group(1))
    assert len(_gpuscale(*ASK, "-f", "csv").splitlines()[0].split(",")) == every
    assert len(_gpuscale(*ASK, "-f", "csv", "--all-columns").splitlines()[0].split(",")) == every


def test_a_narrow_table_drops_what_tells_no_row_apart_first() -> None:
    """At 80 columns `scores` keeps the submitter and the system id and drops first the
    columns of one value in every row (the round, the benchmark, "runs required") and a
    reason empty in nearly every row, whatever the terminal."""
    import csv
    import io

    rows = list(csv.DictReader(io.StringIO(_gpuscale(*ASK, "-f", "csv"))))
    said = " ".join(_gpuscale(*ASK).split())
    dropped = said.split("(not shown, for width: ")[1].split(";")[0].split(", ")
    one_value = [c for c in rows[0] if len({r[c] for r in rows}) == 1]
    named = {c: c.replace("_", " ") for c in rows[0]}
    assert "round" in one_value and "benchmark" in one_value  # the data: -b bert --round v4.1
    said_first = dropped[: len([c for c in one_value if named[c] in dropped])]
    assert {named[c] for c in one_value} >= set(said_first) and said_first
    assert "submitter" not in dropped  # it tells rows apart, and fits once those are gone


def test_what_the_answer_leaves_out_for_width_explain_shows(tmp_path: Path) -> None:
    """`analyze --bench` at 80 columns said "(not shown, for width: platform, params,
    flagged; --explain or -f csv)", and --explain, a record a line per column, left out
    platform and params "for width" too; a record a line per column now drops none."""
    from ..builders import bench_record

    path = tmp_path / "r.jsonl"
    # two runs on 1 device: rows the answer tells apart, too wide for a table at 80
    rows = [bench_record("mlp-1m", 10**6, n, s) for n, s in ((1, 100.0), (2, 187.0), (1, 60.0))]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "80"}

    def run(*extra: str) -> str:
        argv = [sys.executable, "-c", RUN, "analyze", "--bench", str(path), *extra]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)
        assert done.returncode == 0, done.stderr
        return done.stdout

    answer = " ".join(run().split())
    found = re.search(r"not shown, for width: ([^;]+); --explain", answer)
    assert found, answer[-400:]
    explained = run("--explain")
    labels = {re.split(r"\s{2,}", line)[0] for line in explained.splitlines()}
    assert set(found.group(1).split(", ")) <= labels, answer
    assert "not shown, for width" not in explained
