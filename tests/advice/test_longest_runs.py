"""A run timed over 2 steps outlasted by a longer run of its configuration and count is not
read: ``cpu_mlp_two_sweeps_gloo.jsonl`` holds a new user's two sweeps of mlp-0.2m on 1 and 2
gloo processes (times scaled to theirs), ``--steps 2`` (its N = 2 run's communication 105x
the link's prediction) then ``--steps 30`` (its N = 2 run 4.86 ms, flagged noisy). The
2-step reading scaled every count's communication (2 devices predicted at 18.8 ms) and the
flagged longer run was left out, so nothing said the prediction missed it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gpuscale.advice.calibrate.rows import longest
from gpuscale.bench.results import load_bench
from gpuscale.cli import app

HERE = Path(__file__).parent
FILE = HERE / "cpu_mlp_two_sweeps_gloo.jsonl"


def _advice(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(app, ["advise", "--bench", str(FILE), *args, "-f", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_a_run_outlasted_at_its_count_is_dropped() -> None:
    table = load_bench(FILE).table
    kept = longest(table)
    steps = {(int(r.accelerators), int(r.steps)) for r in kept.itertuples()}
    # both N = 1 runs stay (the latest is calibrated on); at N = 2 only the 30-step run
    assert steps == {(1, 2), (1, 30), (2, 30)}
    assert longest(table.iloc[:0]).empty


def test_another_configuration_is_not_outlasted() -> None:
    table = load_bench(FILE).table
    for column, values in (("batch_per_device", {2: 8, 30: 16}), ("device_name", {2: "a"})):
        other = table.assign(**{column: table["steps"].map(values).fillna("b")})
        assert len(longest(other)) == len(table), column


def test_the_short_runs_communication_scales_no_count() -> None:
    advice = _advice()
    two = next(r for r in advice["predictions"] if r["accelerators"] == 2)
    # the link's own prediction (0.12 ms), not 105x it (12.6 ms)
    assert 0.1 < two["comm_ms"] < 0.15


def test_the_longer_run_measured_is_set_against_the_prediction() -> None:
    advice = _advice()
    (at_two,) = advice["measured"]
    assert at_two["accelerators"] == 2 and not at_two["inside"]
    assert at_two["speedups"] == [at_two["measured_speedup"]]  # the 30-step run alone
    assert 0.3 < at_two["measured_speedup"] < 0.4
    assert [d["accelerators"] for d in advice["disagreements"]] == [2]
