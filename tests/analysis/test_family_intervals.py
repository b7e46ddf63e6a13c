"""Each row's S and E' intervals against its own family's reference
(``score_intervals.family_intervals``, the report's like-with-like bars): the intervals
``-r family`` gives, the reference's runs and choice resampled too, so that they are wider
than a system's time interval carried to E' with the reference held exact (v4.1 BERT's
16 x H100: 0.738-0.848, where the time interval alone gives 0.755-0.840)."""

from __future__ import annotations

import numpy as np
import pytest

from gpuscale.analysis.analyze import AnalysisOptions, workload_table
from gpuscale.tables import CI_COLUMNS, FAMILY_CI_COLUMNS

KEY = ["org", "system_id", "accelerators"]


@pytest.fixture(scope="module")
def bert(v41):
    """v4.1 BERT's table under the study's rule, and under ``-r family``."""
    study = workload_table(v41, "v4.1", "bert", AnalysisOptions()).table
    family = workload_table(v41, "v4.1", "bert", AnalysisOptions(reference="family")).table
    return study, family


def test_they_are_the_intervals_of_the_family_rule(bert) -> None:
    study, family = bert
    both = study.merge(family, on=KEY, suffixes=("", "_family_rule"))
    assert len(both) == len(study) == len(family) == 29
    for mine, theirs in zip(FAMILY_CI_COLUMNS, CI_COLUMNS[2:], strict=True):
        assert np.array_equal(both[mine], both[f"{theirs}_family_rule"], equal_nan=True), mine
    # under -r family, the table's own intervals are kept
    for mine, theirs in zip(FAMILY_CI_COLUMNS, CI_COLUMNS[2:], strict=True):
        assert np.array_equal(family[mine], family[theirs], equal_nan=True)


def test_each_family_reference_is_exact_against_itself(bert) -> None:
    study, family = bert
    refs = family[
        (family["org"] == family["reference_org"])
        & (family["system_id"] == family["reference_system_id"])
    ]
    assert len(refs) == study["accelerator_family"].nunique() == 7
    mine = study.merge(refs[KEY], on=KEY)
    assert (mine[list(FAMILY_CI_COLUMNS)] == 1.0).all().all()


def test_the_references_spread_widens_the_16_h100_interval(bert) -> None:
    study, _ = bert
    row = study[(study["submitter"] == "Lambda") & (study["accelerators"] == 16)].iloc[0]
    assert row["accelerator_family"] == "H100-SXM5-80GB"
    # its E' against its family's reference (Fujitsu's 4 x H100, 10.55 min)
    e = 10.547171 * 4 / (row["time_to_train_min"] * 16)
    t = row["time_to_train_min"]
    time_only = (e * t / row["time_to_train_min_ci_high"], e * t / row["time_to_train_min_ci_low"])
    low, high = (
        row["family_normalized_efficiency_ci_low"],
        row["family_normalized_efficiency_ci_high"],
    )
    assert (round(low, 3), round(high, 3)) == (0.738, 0.848)
    assert (round(time_only[0], 3), round(time_only[1], 3)) == (0.755, 0.840)
    assert low < time_only[0] < e < time_only[1] < high
