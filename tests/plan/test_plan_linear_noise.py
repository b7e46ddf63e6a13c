"""A plan from one result scales it linearly: the arithmetic's 1.000003x over linear is
not said as "more than linear" (a fresh-clone walk saw it on one H200 result)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.mlperf.ingest import read_round
from gpuscale.planning import PlanRequest, plan_for

from ..mlperf.logbuilder import RoundBuilder

pytest.importorskip("mlperf_logging")


def test_linear_within_the_spread_is_not_beyond_linear(tmp_path: Path) -> None:
    rb = RoundBuilder(name="training_results_v5.0")
    rb.system("Acme", "box8")
    rb.runs("Acme", "box8", "bert", [10.0 + 0.01 * i for i in range(10)])
    scores = read_round(rb.write_dir(tmp_path)).scores
    request = PlanRequest(workload="bert", accelerator="H100", devices=(8, 16, 32))
    result = plan_for(request, scores)
    rows = [r for r in result.rows if r["time_to_train_min"] == r["time_to_train_min"]]
    assert len(rows) >= 2
    hours = [r["accelerators"] * r["time_to_train_min"] for r in rows]
    assert max(hours) / min(hours) < 1.005  # linear to the arithmetic: the case in point
    assert all(not r.get("beyond_linear") for r in result.rows)
