"""``plan --explain`` holds every column ``-f csv`` has, bar the two it says in lines
(``nearest``: each count's "lean on" line; ``rests_on_outlier``: a line of its own), and
a submitter beside its system's name is written once where the name starts with it
(Lenovo's "Lenovo ThinkSystem SR675 V3 ...")."""

from __future__ import annotations

import re

from gpuscale.planning import PlanRequest, plan_for
from gpuscale.planning.terminal import nearest_text
from gpuscale.planning.words import plan_records
from gpuscale.tables.plan import PLAN_COLUMNS, nearest_columns

# a word written twice in a row ("Lenovo Lenovo"), case ignored
TWICE = re.compile(r"\b(\w+) \1\b", re.IGNORECASE)


def _result():
    return plan_for(PlanRequest(workload="bert", accelerator="H100-PCIe-80GB", devices=(8, 16)))


def test_explain_shows_every_column_but_those_said_in_lines() -> None:
    records, said, _ = plan_records(_result(), terminal=True)
    csv_records, _, _ = plan_records(_result(), terminal=False)
    named = {"picked by" if c == "stops_paying" else c for c in PLAN_COLUMNS}
    assert set(records[0]) == named - {"nearest", "rests_on_outlier"}
    flat = set(nearest_columns([]))  # CSV: a column per field of each system leaned on
    assert set(csv_records[0]) == set(PLAN_COLUMNS) - {"nearest"} | flat
    assert {"batch_per_accelerator", "expected_to_converge", "extrapolated", "pareto"} <= set(
        records[0]
    )
    leans = [line for line in said if " on: " in line.split(",")[0]]
    assert len(leans) == len(records)  # a "lean on" line per count with a time
    # and one of the counts picked, by what and over what, where a count is picked
    assert said[len(leans) :] == [said[-1]] and said[-1].startswith("picks ")


def test_a_submitter_is_not_written_twice_before_its_system_name() -> None:
    result = _result()
    nearest = [n for row in result.rows for n in row["nearest"]]
    lenovo = [n for n in nearest if str(n["system"]).startswith(str(n["submitter"]))]
    assert lenovo  # the data: Lenovo's system names start with "Lenovo"
    assert not TWICE.search(nearest_text(lenovo))
    _, said, _ = plan_records(result, terminal=True)
    assert not any(TWICE.search(line) for line in [*said, *result.notes])
