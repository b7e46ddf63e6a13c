"""Speedup = throughput factor x convergence factor, exactly, whatever the numbers."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.analysis.decompose import decompose, dominant_loss
from gpuscale.analysis.metrics import scaling_table

from .tables import scores

positive = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 4096), positive, positive), min_size=1, max_size=8))
def test_identity(systems: list[tuple[int, float, float]]) -> None:
    frame = scores([(f"s{i}", "X", n, t) for i, (n, t, _) in enumerate(systems)])
    frame["samples_to_converge"] = [samples for _, _, samples in systems]
    table = decompose(scaling_table(frame, "bert"))
    flagged = table["decomposition_flag"] != ""  # counts one law cannot hold: no factors
    assert table.loc[flagged, ["throughput_factor", "convergence_factor"]].isna().all().all()
    table = table[~flagged]
    product = table["throughput_factor"] * table["convergence_factor"]
    assert all(
        math.isclose(p, s, rel_tol=1e-9) for p, s in zip(product, table["speedup"], strict=True)
    )
    norm = table["throughput_efficiency"] * table["convergence_factor"]
    assert all(
        math.isclose(p, e, rel_tol=1e-9)
        for p, e in zip(norm, table["normalized_efficiency"], strict=True)
    )


def test_hand_case_and_dominant_factor() -> None:
    # reference: 8 devices, 1000 samples in 10 min; big: 64 devices, 2000 samples in 2 min
    frame = scores([("ref", "X", 8, 10.0), ("big", "X", 64, 2.0)])
    frame["samples_to_converge"] = [1000.0, 2000.0]
    big = decompose(scaling_table(frame, "bert")).set_index("system_id").loc["big"]
    assert big["throughput_factor"] == pytest.approx(10.0)  # (2000/120) / (1000/600)
    assert big["convergence_factor"] == pytest.approx(0.5)
    assert big["speedup"] == pytest.approx(5.0)
    assert big["throughput_efficiency"] == pytest.approx(10.0 * 8 / 64)
    factor, share = dominant_loss(big)  # log(1.25) > 0: all of the loss is convergence
    assert factor == "convergence" and share == pytest.approx(1.0)


def test_missing_samples_give_nan() -> None:
    frame = scores([("ref", "X", 8, 10.0), ("big", "X", 64, 2.0)])
    frame["samples_to_converge"] = [1000.0, float("nan")]
    table = decompose(scaling_table(frame, "bert"))
    assert pd.isna(table.set_index("system_id").loc["big", "convergence_factor"])


def _dlrm_v07(batch: float, samples: float) -> pd.Series:
    """v0.7 DLRM's shape: the reference logs 1.9 epochs at 55,296 in 4.49 min; the other
    row, 64 devices in 1.21 min at ``batch``, logs ``samples``."""
    frame = scores([("ref", "X", 8, 4.494), ("tpu", "X", 64, 1.208)])
    frame["samples_to_converge"] = [1.9, samples]
    frame["global_batch_size"] = [55296.0, batch]
    return decompose(scaling_table(frame, "bert"), "measured").set_index("system_id").loc["tpu"]


def test_counts_one_law_cannot_hold_give_no_factors() -> None:
    """18 "epochs" against 1.9 at one batch (9.47x): tpu-v4-128 read throughput factor
    35.2 x convergence factor 0.106 (throughput efficiency 4.40); now none, and why."""
    tpu = _dlrm_v07(55296.0, 18.0)
    assert tpu[["throughput_factor", "convergence_factor", "throughput_efficiency"]].isna().all()
    assert "to converge are 9.47x its reference's at 1x" in tpu["decomposition_flag"]
    assert "samples to converge kept apart" in tpu["decomposition_flag"]
    assert tpu["speedup"] == pytest.approx(4.494 / 1.208)  # the official times' ratio stands


def test_counts_the_batch_explains_keep_their_factors() -> None:
    """At 4x the batch, 4x the samples is what one law can give (and a little more than
    the runs' own spread beyond it): factors given, no flag."""
    tpu = _dlrm_v07(4 * 55296.0, 4 * 1.9 * 3.0)
    assert tpu["decomposition_flag"] == ""
    assert tpu["convergence_factor"] == pytest.approx(1 / 12)
