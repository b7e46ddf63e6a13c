"""What a plan rests on, said truly: rounds of different quality targets pooled, the
RCPs of the newest round, the level's own round, the intervals' measured coverage, a
borrowed level's workloads and the cost's unit."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest

from gpuscale.planning import PlanRequest, plan_for
from gpuscale.planning.cache import COVERAGE_FILE
from gpuscale.planning.terminal import COST_UNIT, plan_answer, plan_document
from gpuscale.tables.workloads import round_key


def _scores(rows: list[tuple]) -> pd.DataFrame:
    """A scores table: (round, submitter, family, devices, minutes, batch) per BERT system."""
    return pd.DataFrame(
        [
            {
                "round": r,
                "first_round": r,
                "same_runs_as": "",
                "org": who,
                "submitter": who,
                "system_id": f"{f}_{n}_{r}_{k}",
                "system_name": f"{n}x{f}",
                "division": "closed",
                "accelerator_family": f,
                "accelerators": n,
                "benchmark": "bert",
                "workload": "bert",
                "time_to_train_min": t,
                "global_batch_size": b,
                "samples_to_converge": math.nan,
            }
            for k, (r, who, f, n, t, b) in enumerate(rows)
        ]
    )


def v07_and_v50() -> pd.DataFrame:
    """X1 ran BERT in v0.7 only (target 0.712, no RCPs); Y2 in v5.0 (0.720, RCPs)."""
    rows = [("v0.7", "Acme", "X1", n, 400.0 / n, 32 * n) for n in (8, 16, 64)]
    rows += [("v5.0", "Beta", "Y2", n, 200.0 / n, 48 * n) for n in (8, 16, 64)]
    return _scores(rows)


def test_rounds_of_two_targets_are_said_pooled_and_the_newest_rcps_kept() -> None:
    result = plan_for(
        PlanRequest(workload="bert", accelerator="X1", devices=[8, 32]), v07_and_v50()
    )
    pooled = result.model["pooled"]
    assert pooled["rounds"] == ["v0.7", "v5.0"]
    assert pooled["targets"] == {"v0.7": pytest.approx(0.712), "v5.0": pytest.approx(0.72)}
    assert pooled["targets_pooled"] and not pooled["eras_pooled"]
    # the short answer says it, in one line naming both targets
    (line,) = [s for s in plan_answer(result)[1] if "0.712" in s]
    assert "v0.7" in line and "v5.0" in line
    # convergence stays modelled: samples to converge from v5.0's RCPs
    assert all(math.isfinite(r["expected_to_converge"]) for r in result.rows)
    # the level is X1's v0.7 one, the round its numbers come from
    model = next(n for n in result.notes if n.startswith("Model:"))
    assert "at its v0.7 level" in model and "at v5.0's level" not in model
    # v0.7 is an earlier round in these data
    assert not any("no earlier round" in n for n in result.notes)


def test_one_target_pools_nothing() -> None:
    rows = [("v5.0", "Beta", "Y2", n, 200.0 / n, 48 * n) for n in (8, 16, 64)]
    result = plan_for(PlanRequest(workload="bert", accelerator="Y2", devices=[8]), _scores(rows))
    assert not result.model["pooled"]["targets_pooled"]
    assert not result.model["pooled"]["eras_pooled"]
    assert result.said == ()


def test_the_intervals_say_their_measured_coverage_per_class() -> None:
    stored = json.loads(COVERAGE_FILE.read_text())["classes"]
    result = plan_for(PlanRequest(workload="bert", accelerator="H100", devices=[8, 12, 4096]))
    coverage = result.model["interval_coverage"]
    assert coverage["measured"]
    classes = {r["count_class"] for r in result.rows}
    assert set(coverage["classes"]) == classes
    for kind, said in coverage["classes"].items():
        assert said["coverage_pct"] == stored[kind]["coverage_pct"]
        assert said["forecasts"] == stored[kind]["forecasts"]
        assert said["few"] == (stored[kind]["forecasts"] < 20)
        assert any(f"covered {stored[kind]['coverage_pct']:.1f}% of" in n for n in result.notes)


def test_data_given_has_no_measured_coverage() -> None:
    result = plan_for(PlanRequest(workload="bert", accelerator="X1", devices=[8]), v07_and_v50())
    assert result.model["interval_coverage"] == {"measured": False, "rounds": [], "classes": {}}


def test_a_borrowed_level_names_the_workloads_and_rounds_it_rests_on() -> None:
    result = plan_for(PlanRequest(workload="bert", accelerator="TPU-v5p", devices=[64]))
    assert result.model["borrowed"]
    (line,) = [s for s in plan_answer(result)[1] if "borrowed" in s]
    from gpuscale.planning.cache import default_fits

    fits = default_fits()
    for name, fit in fits["workloads"].items():
        mine = (fit["families"].get("TPU-v5p") or {}).get("systems") or []
        if not mine:
            continue
        rounds = sorted({s[0] for s in mine}, key=round_key)
        assert f"{name} ({rounds[0]}" in line and rounds[-1] in line


def test_the_plan_document_names_its_cost_unit() -> None:
    ask = {"workload": "bert", "accelerator": "H100", "devices": [8]}
    priced = plan_document(plan_for(PlanRequest(**ask, price_per_device_hour=2.0)))
    assert priced["cost_unit"] == COST_UNIT and priced["rows"][0]["cost"] > 0
    assert plan_document(plan_for(PlanRequest(**ask)))["cost_unit"] is None
