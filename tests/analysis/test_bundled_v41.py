"""Invariants of the analysis on the bundled v4.1 round (the study's)."""

from __future__ import annotations

import numpy as np
import pytest

from gpuscale.analysis import AnalysisOptions, as_json
from gpuscale.tables import STUDY_WORKLOADS


@pytest.fixture(params=["study", "family"])
def results(request, study_analysis):
    options = AnalysisOptions(reference=request.param, n_boot=300)
    return options, study_analysis[request.param]


def test_all_four_workloads(results) -> None:
    _, res = results
    assert [r.workload for r in res] == list(STUDY_WORKLOADS)


def test_reference_invariants(results) -> None:
    _, res = results
    for r in res:
        t = r.table
        is_ref = t["system_id"] == t["reference_system_id"]
        assert is_ref.any()
        assert np.allclose(t.loc[is_ref, "speedup"], 1.0)
        assert np.allclose(t.loc[is_ref, "normalized_efficiency"], 1.0)


def test_pareto_systems_are_not_dominated(results) -> None:
    _, res = results
    for r in res:
        t = r.table
        front = t[t["pareto"]]
        for row in front.itertuples():
            dominated = (
                (t["time_to_train_min"] <= row.time_to_train_min)
                & (t["accelerator_hours"] <= row.accelerator_hours)
                & (
                    (t["time_to_train_min"] < row.time_to_train_min)
                    | (t["accelerator_hours"] < row.accelerator_hours)
                )
            )
            assert not dominated.any()
        # and every system off the front is dominated by one on it (the two together
        # define the Pareto front; pareto_mask's own known answers: test_equilibrium)
        for row in t[~t["pareto"]].itertuples():
            by = (
                (front["time_to_train_min"] <= row.time_to_train_min)
                & (front["accelerator_hours"] <= row.accelerator_hours)
                & (
                    (front["time_to_train_min"] < row.time_to_train_min)
                    | (front["accelerator_hours"] < row.accelerator_hours)
                )
            )
            assert by.any(), row.system_id


def test_each_pick_exists(results) -> None:
    _, res = results
    for r in res:
        keys = set(r.table["org"] + "/" + r.table["system_id"])
        # under per-family references no speed x efficiency pick is made across them
        several = r.table[["reference_org", "reference_system_id"]].drop_duplicates()
        assert (r.equilibrium.max_speed_x_efficiency is None) == (len(several) > 1)
        for family in r.by_family:
            # a family at one accelerator count has no E' that measures scaling: no pick
            counts = r.table.loc[r.table["accelerator_family"] == family.scope, "accelerators"]
            one_count = counts.nunique() == 1
            assert (family.max_speed_x_efficiency is None) == one_count, family.scope
        for pick in r.equilibrium.picks:
            assert pick.key in keys


def test_json_shape(results) -> None:
    options, res = results
    doc = as_json(res, options)
    for item in doc:
        assert {"round", "benchmark", "reference", "systems", "equilibrium"} <= set(item)
        assert item["reference"]["rule"] == options.reference
        for system in item["systems"]:
            assert {
                "submitter",
                "system_id",
                "system_name",
                "accelerator_family",
                "accelerators",
                "time_to_train_min",
                "speedup",
                "efficiency",
                "normalized_efficiency",
                "accelerator_hours",
                "cluster",
                "pareto",
                "speedup_ci_low",
            } <= set(system)
