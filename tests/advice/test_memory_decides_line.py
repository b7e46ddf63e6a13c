"""Where memory sets the count (the fewest devices that hold the model, short of the
target efficiency), the answer's ``Decides:`` line gives the efficiency of that count and
names that count: a newcomer's walk read "at 4 devices, efficiency is 15%" over a table
whose 4 devices ran at 5% and whose 2 devices, the count advised, at 15%."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

from gpuscale.cli import app

# a 7B model no H100 holds alone under DDP, so ZeRO-2 from 2; the global batch 4 splits over
# 1, 2 and 4 devices, so the decision's focus (4) lies above the count advised (2)
CASE = ["--params", "7e9", "--step-ms", "900", "--batch", "4", "--nodes", "2"]
CASE += ["--gpus-per-node", "8", "--max-devices", "12"]


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, ["advise", *CASE, *args], env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return result.output


def test_the_memory_line_reads_the_count_advised() -> None:
    document = json.loads(_run("-f", "json"))
    chosen = document["recommendation"]["accelerators"]
    rows = {row["accelerators"]: row for row in document["predictions"]}
    assert chosen == 2 and max(rows) == 4  # the case: the focus is above the count advised
    said = " ".join(line.strip() for line in _run().splitlines())
    found = re.search(
        r"Decides: the fewest devices that hold the model, (\d+) with [^:]+: fewer cannot "
        r"hold it; at (\d+) devices?, efficiency is (\d+)%",
        said,
    )
    assert found, said
    fewest, count, percent = map(int, found.groups())
    assert fewest == count == chosen
    assert percent == round(100 * rows[chosen]["efficiency"])
