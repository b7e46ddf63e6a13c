"""The study's E' values set against gpuscale's, system by system: every system the study
counted is found in gpuscale's analysis, a result it counted under both names of the same
runs (Dell's Llama2 -POWER twin) under the name gpuscale keeps."""

from __future__ import annotations

import numpy as np
import pytest

from gpuscale.analysis.study_values import COMPARED_COLUMNS, compare_values, study_rows

TWIN = "8xXE9680x8H100-SXM-80GB"


def test_every_system_the_study_counted_is_compared(v41) -> None:
    rows = study_rows(v41.scores)
    # as the study counts: the complete round's 29 BERT (it listed 28), Llama2's 29 with
    # both names of Dell's runs, RetinaNet's 26, Stable Diffusion's 25
    assert rows.groupby("workload").size().to_dict() == {
        "bert": 29,
        "llama2_70b_lora": 29,
        "retinanet": 26,
        "stable_diffusion": 25,
    }
    compared = compare_values(v41.scores, rows)
    assert list(compared.columns) == list(COMPARED_COLUMNS)
    assert (compared["found_system_id"] != "").all()  # every one found, none left over
    twin = compared[compared["system_id"] == f"{TWIN}-POWER"].iloc[0]
    assert twin["other_name"] and twin["found_system_id"] == TWIN
    assert compared["other_name"].sum() == 1
    assert np.abs(compared["difference"]).max() < 1e-12  # the same times, the same rule
    # the study's 108 values: its rows without the BERT system it did not list
    found = compared[["workload", "submitter", "found_system_id"]].drop_duplicates()
    assert len(compared) - 1 == 108 and len(found) == 108  # gpuscale's 108, each once


def test_a_study_value_is_compared_with_the_other_name_of_its_runs(v41) -> None:
    study = study_rows(v41.scores)
    mine = study[study["system_id"] == f"{TWIN}-POWER"].assign(e_prime=1.5)
    (row,) = compare_values(v41.scores, mine).itertuples(index=False)
    assert row.found_system_id == TWIN
    assert row.difference == pytest.approx(row.gpuscale_e_prime - 1.5)
