"""What a row rests on, one field every sentence reads (issue 60 item 4; a new user's walk).

Seen: where a count's step rested on its runs (measured outside the predicted interval),
the explanation split the step into the model's terms summing to a fraction of the
measured step and named a modelled term (``dominant_term`` 'fixed') the measurement did
not show; the step-interval sentence said "no measurement at N > 1 ... extrapolated" beside
"rests on the measurement"; and it said the model's error (-26% to +35%) where the rows
carried other intervals (paths.jsonl: -47% / +11% on the speedup at 2 devices)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

from .test_reconcile import BUSY, _file, _json

PATHS = Path("/work/shared/gpu/h100/paths.jsonl")
TERMS = ("compute_ms", "ddp_ms", "wait_ms", "exposed_comm_ms", "unexplained_ms")


def _rows(doc: dict) -> dict[int, dict]:
    return {r["accelerators"]: r for r in doc["predictions"]}


def _step_interval(doc: dict) -> str:
    (line,) = [s for s in doc["explanation"] if s.startswith("Step interval:")]
    return line


def _pct(ratio: float) -> str:
    return f"{ratio - 1:+.0%}"


@pytest.mark.parametrize("flags", [BUSY, None], ids=["flagged", "unflagged"])
def test_a_measured_step_is_split_into_the_terms_and_what_they_leave(tmp_path, flags) -> None:
    doc = _json(_file(tmp_path, [0.3, 0.4, 0.5], flags))
    rows = _rows(doc)
    assert rows[1]["rests_on"] == "predicted" and rows[1]["unexplained_ms"] == 0
    # 2 devices: no run at the row's per-device batch 4; derived from the runs at 8
    assert rows[2]["rests_on"] == "derived"
    assert doc["weak_scaling"][1]["rests_on"] == "measured"  # the runs' own configuration
    assert rows[4]["rests_on"] == "measured_below"  # above the miss, not measured itself
    for row in rows.values():  # the terms, the remainder named, sum to the step the row says
        assert sum(row[t] for t in TERMS) == pytest.approx(row["step_ms"], rel=1e-9)
    # the measured step at 2 devices is 155 ms; the model's terms explain 31 ms of it
    assert rows[2]["unexplained_ms"] > 3 * (rows[2]["step_ms"] - rows[2]["unexplained_ms"])
    d = doc["decision"]
    assert d["focus"]["accelerators"] == 2 and d["focus"]["rests_on"] == "derived"
    assert d["focus"]["derived_from_batch"] == 8
    assert d["limit"]["overheads_ms"]["unexplained"] == pytest.approx(rows[2]["unexplained_ms"])
    # the dominant term is chosen among the terms that account for the measured step
    assert d["limit"]["dominant_term"] == "unexplained"
    assert d["limit"]["dominant_term"] == max(
        d["limit"]["overheads_ms"], key=d["limit"]["overheads_ms"].get
    )
    # the row's step interval is the runs' range, as its speedup's is
    (found,) = doc["disagreements"]
    weak = {r["accelerators"]: r for r in doc["weak_scaling"] or doc["predictions"]}[2]
    ratio = weak["step_ms_high"] / weak["step_ms_low"]
    assert ratio == pytest.approx(
        found["measured"]["speedup_high"] / found["measured"]["speedup_low"], rel=1e-6
    )


def test_a_predicted_step_has_nothing_unexplained(tmp_path) -> None:
    doc = _json(_file(tmp_path, [1.9]))
    assert {r["rests_on"] for r in doc["predictions"]} == {"predicted"}
    assert {r["unexplained_ms"] for r in doc["predictions"]} == {0.0}
    assert doc["decision"]["limit"]["overheads_ms"]["unexplained"] == 0.0
    assert doc["decision"]["focus"]["rests_on"] == "predicted"
    assert doc["decision"]["limit"]["dominant_term"] != "unexplained"


def test_the_step_interval_says_the_interval_each_measured_row_carries(tmp_path) -> None:
    """The flagged runs' range is the row's interval: the sentence says it, and that the
    runs are all flagged (the row's own fields, not the model's extrapolated width)."""
    doc = _json(_file(tmp_path, [0.3, 0.4, 0.5], BUSY))
    row = _rows(doc)[2]
    line = _step_interval(doc)
    low, high = row["speedup_low"] / row["speedup"], row["speedup_high"] / row["speedup"]
    assert f"speedup {_pct(low)} to {_pct(high)}, the range of 3 runs, all flagged" in line


def test_the_step_interval_says_the_interval_the_rows_carry() -> None:
    """paths.jsonl (a fixed cost assumed over 0.49-19.5 ms): the rows' speedup intervals,
    not the model's -26% to +35% alone."""
    if not PATHS.exists():
        pytest.skip(f"{PATHS} not present on this machine")

    result = CliRunner().invoke(app, ["advise", "--bench", str(PATHS), "-f", "json"])
    doc = json.loads(result.output)
    line = _step_interval(doc)
    for n, row in _rows(doc).items():
        if n < 2:
            continue
        assert row["rests_on"] == "predicted"
        low, high = row["speedup_low"] / row["speedup"], row["speedup_high"] / row["speedup"]
        assert f"speedup {_pct(low)} to {_pct(high)}" in line
    assert "speedup -44% to +9%" in line  # 2 devices, as the table reads (FSDP work 10 ms)
