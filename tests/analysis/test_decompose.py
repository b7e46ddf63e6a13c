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
