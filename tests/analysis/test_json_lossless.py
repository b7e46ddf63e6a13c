"""``analyze -f json`` loses nothing ``-f csv`` has: each system of the JSON holds every
CSV column (division, availability, runs_converged, scaling_factor, score_reason, the
family_* picks ...) with the same value, in the same order of systems."""

from __future__ import annotations

import csv
import io
import json
import math

from typer.testing import CliRunner

from gpuscale.cli import app

ARGS = ["analyze", "--round", "v4.1", "-b", "bert,stable_diffusion"]


def _run(fmt: str) -> str:
    done = CliRunner().invoke(app, [*ARGS, "-f", fmt])
    assert done.exit_code == 0, done.output
    return done.stdout


def _same(cell: str, value: object) -> bool:
    """A CSV cell and the JSON's value of it: an empty cell is null, a flag True/False,
    a number the same to the digits the CSV writes."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return cell == ""
    if isinstance(value, bool | str):
        return cell == str(value)
    return math.isclose(float(cell), float(value), rel_tol=1e-9)  # type: ignore[arg-type]


def test_every_csv_column_is_in_each_json_system_with_its_value() -> None:
    rows = list(csv.DictReader(io.StringIO(_run("csv"))))
    systems = [s for part in json.loads(_run("json"))["rounds"] for s in part["systems"]]
    assert len(rows) == len(systems) > 20
    columns = list(rows[0])
    for wanted in ("division", "availability", "runs_converged", "scaling_factor"):
        assert wanted in columns
    assert {"score_reason", "family_reference", "family_picks"} <= set(columns)
    for row, system in zip(rows, systems, strict=True):
        assert list(system) == columns  # every column, in the CSV's order
        differ = [c for c in columns if not _same(row[c], system[c])]
        assert not differ, (row["system_id"], {c: (row[c], system[c]) for c in differ})
