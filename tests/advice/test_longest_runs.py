"""A run timed over 2 steps outlasted by a longer run of its configuration and count is not
read: ``cpu_mlp_two_sweeps_gloo.jsonl`` holds a new user's two sweeps of mlp-0.2m on 1 and 2
gloo processes (times scaled to theirs), ``--steps 2`` (its N = 2 run's communication 105x
the link's prediction) then ``--steps 30`` (its N = 2 run 4.86 ms, flagged noisy). The
2-step reading scaled every count's communication (2 devices predicted at 18.8 ms) and the
flagged longer run was left out, so nothing said the prediction missed it. The rule holds at
every count, N = 1 too: the same file with its 30-step runs flagged busy at both counts has
no trustworthy N = 1 run left (its 2-step ones outlasted), and is refused as a file of the
flagged runs alone would be, saying the short runs it passed over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.api import advise_loaded
from gpuscale.advice.calibrate.errors import CalibrationError
from gpuscale.advice.calibrate.rows import longest, outlasted_by_flagged
from gpuscale.advice.request import AdviceRequest
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
    # at each count, N = 1 too, only the 30-step run
    assert steps == {(1, 30), (2, 30)}
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
    # 0.423x over its N = 1 no-sync step (the prediction's one device), 0.335x over the bare
    assert 0.4 < at_two["measured_speedup"] < 0.45 and at_two["basis"] == ["nosync"]
    assert [d["accelerators"] for d in advice["disagreements"]] == [2]


BUSY = "machine busy: other processes used 35% of its CPU time during the timed steps"


def _busy_longer(tmp_path: Path) -> Path:
    """The two-sweep file with its 30-step runs (both counts) flagged busy by the bench."""
    lines = []
    for line in FILE.read_text().splitlines():
        record = json.loads(line)
        if (record.get("config") or {}).get("steps") == 30:
            record["flags"] = [*record["flags"], BUSY]
        lines.append(json.dumps(record))
    path = tmp_path / "busy sweep" / "results.jsonl"
    path.parent.mkdir()
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_flagged_longer_run_outlasts_at_every_count(tmp_path: Path) -> None:
    table = load_bench(_busy_longer(tmp_path)).table
    kept = longest(table)
    assert {(int(r.accelerators), int(r.steps), bool(r.flagged)) for r in kept.itertuples()} == {
        (1, 30, True),
        (2, 30, True),
    }
    assert outlasted_by_flagged(table) == 2
    assert outlasted_by_flagged(load_bench(FILE).table) == 1  # at N = 2 alone there


def test_no_trusted_single_run_left_is_refused(tmp_path: Path) -> None:
    path = _busy_longer(tmp_path)
    with pytest.raises(CalibrationError) as refused:
        advise_loaded(AdviceRequest(bench=str(path)))
    left = refused.value.left
    assert left is not None and left.single and (left.left, left.outlasted) == (2, 2)
    result = CliRunner().invoke(app, ["advise", "--bench", str(path), "-f", "json"])
    assert result.exit_code != 0


def test_allowed_flagged_the_longer_runs_decide(tmp_path: Path) -> None:
    advice = advise_loaded(AdviceRequest(bench=str(_busy_longer(tmp_path)), allow_flagged=True))
    runs = advice.calibration.runs
    assert runs.one_step_ms == pytest.approx(1.19)  # the 30-step N = 1 run, not the 2-step
    # the 30-step run alone at N = 2 (0.423x over its N = 1 no-sync step), not the 2-step
    assert [(m.devices, m.allowed) for m in runs.measured] == [(2, True)]
    assert 0.4 < runs.measured[0].speedup < 0.45


def test_a_model_passed_over_says_its_flagged_and_outlasted_runs_apart(tmp_path: Path) -> None:
    """The largest model, passed over for a flagged 30-step N = 1 run that outlasts its
    unflagged 2-step one, is said with 1 flagged run and 1 outlasted (not "its N = 1 runs
    flagged", 2 runs, one of them unflagged)."""
    from gpuscale.advice.calibrate.rows import why_not
    from gpuscale.bench.results_file import append_result

    from ..builders import bench_record

    path = _busy_longer(tmp_path)
    table = load_bench(path).table
    found = why_not(table)
    assert (found["case"], found["runs"], found["outlasted"]) == ("flagged", 1, 1)
    assert found["kinds"] == ("machine busy",)
    alone = why_not(table[table["steps"] == 30])  # no shorter run: none outlasted
    assert (alone["runs"], alone["outlasted"]) == (1, None)
    for world in (1, 2):  # a smaller model with trustworthy runs, advised on instead
        append_result(path, bench_record("mlp-tiny", 1_000, world, 1000.0 * world**0.8))
    advice = gpuscale.advise(bench=path, max_devices=2, link="pcie-phb")
    [said] = [s for s in advice.explanation if s.startswith("Advised on mlp-tiny")]
    passed = said.split("mlp-0.2m", 1)[1]
    assert "1 shorter" in passed and "runs flagged" not in passed
