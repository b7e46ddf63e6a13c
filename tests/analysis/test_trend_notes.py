"""``trends``' notes are said under its terminal table, each clause once per workload with
the rows it is about, not in a column whose narrow cells ran 3 to 9 lines a row; CSV keeps
each row's ``note``."""

from __future__ import annotations

import csv
import io

from typer.testing import CliRunner

from gpuscale.cli import app

ASK = ["trends", "-b", "bert"]


def test_the_notes_are_under_the_table_and_in_csv_s_column() -> None:
    runner = CliRunner()
    table = runner.invoke(app, ASK, env={"COLUMNS": "100"})
    data = runner.invoke(app, [*ASK, "-f", "csv"])
    assert table.exit_code == 0 and data.exit_code == 0, table.output + data.output
    rows = list(csv.DictReader(io.StringIO(data.stdout)))
    clauses = {c for r in rows for c in r["note"].split("; ") if c}
    assert clauses  # v3.0 is the first bundled round of bert: said
    lines = table.stdout.splitlines()
    under = lines[max(i for i, line in enumerate(lines) if line.startswith("└")) + 1 :]
    for clause in clauses:  # each once, on a line of its own under the table
        assert sum(clause in line for line in under) == 1, clause
    headers = [line for line in lines if line.startswith("┃")]
    assert headers and not any("note" in line.split() for line in headers)
    assert max(len(line) for line in lines if line.startswith("│")) <= 100
