"""``trends --explain`` and ``energy --explain``: under the table, how each column is made
and how many results no row holds, by why; every result of the workloads is in a row or
counted there (the rows' results plus those left out are the scores table's)."""

from __future__ import annotations

import re

from typer.testing import CliRunner

from gpuscale import load_round
from gpuscale.cli import app

runner = CliRunner()


def _invoke(*args: str):  # type: ignore[no-untyped-def]
    result = runner.invoke(app, list(args), env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    return result


def _left_out(stdout: str) -> tuple[int, dict[str, int]]:
    """The total the explained lines say is left out, and each reason's count (its words
    after the count, as a key)."""
    lines = stdout.splitlines()
    head = next(
        i
        for i, x in enumerate(lines)
        if x.startswith(("results left out", "scored results left out"))
    )
    total = int(re.search(r"\(([\d,]+) results?", lines[head]).group(1).replace(",", ""))
    each = {}
    for line in lines[head + 1 :]:
        found = re.match(r"  ([\d,]+) (.+)", line)
        if found is None:
            break
        each[found.group(2)] = int(found.group(1).replace(",", ""))
    return total, each


def test_trends_explain_counts_every_result_in_a_row_or_left_out() -> None:
    """v4.0 and v4.1 BERT: the rows' systems plus the results left out are every result of
    BERT in those rounds; the republished ones left out are the count the notes give;
    without --explain none of it is said, and -f json is unchanged by it."""
    args = ("trends", "--round", "v4.0,v4.1", "-b", "bert")
    explained, plain = _invoke(*args, "--explain"), _invoke(*args)
    rows = runner.invoke(app, [*args, "-f", "csv"]).stdout.splitlines()
    systems = rows[0].split(",").index("systems")
    in_rows = sum(int(r.split(",")[systems]) for r in rows[1:])
    total, each = _left_out(explained.stdout)
    scores = load_round("v4.0", "v4.1").scores
    assert in_rows + total == int((scores["workload"] == "bert").sum())
    assert total == sum(each.values())
    republished = next(n for why, n in each.items() if why.startswith("results republished"))
    said = re.findall(r"left out (\d+) republished", plain.stdout)
    assert republished == sum(map(int, said)) > 0
    assert "\nresults left out" not in plain.stdout and explained.stdout.startswith(plain.stdout)
    assert "common accelerators: " in explained.stdout  # each column said how it is made
    quiet = runner.invoke(app, [*args, "-f", "json"]).stdout
    assert runner.invoke(app, [*args, "-f", "json", "--explain"]).stdout == quiet


def test_energy_explain_counts_every_scored_result_in_a_row_or_left_out() -> None:
    """v4.1: each energy row is a scored result's power measurement; those rows plus the
    scored results left out (no power logs, ...) are every scored result of the round."""
    explained = _invoke("energy", "--round", "v4.1", "--explain")
    plain = _invoke("energy", "--round", "v4.1")
    rows = runner.invoke(app, ["energy", "--round", "v4.1", "-f", "csv"]).stdout.splitlines()
    total, each = _left_out(explained.stdout)
    scores = load_round("v4.1").scores
    assert len(rows) - 1 + total == int(scores["time_to_train_min"].notna().sum())
    assert total == sum(each.values()) and each
    assert explained.stdout.startswith(plain.stdout) and "energy kJ: " in explained.stdout
