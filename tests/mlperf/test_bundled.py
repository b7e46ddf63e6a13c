"""The shipped tables are what a fresh ingest of the raw rounds gives, byte for byte."""

from __future__ import annotations

import pandas as pd
import pytest

from gpuscale.mlperf import bundled_rounds, load_round
from gpuscale.tables import RoundTables

pytestmark = [pytest.mark.shared, pytest.mark.slow]


@pytest.mark.parametrize("round_name", bundled_rounds())
def test_bundled_equals_a_fresh_ingest(round_name: str, fresh_round) -> None:
    fresh = fresh_round(round_name)
    shipped = load_round(round_name)
    for name in RoundTables.NAMES:
        pd.testing.assert_frame_equal(
            getattr(shipped, name), getattr(fresh, name), check_dtype=False, obj=name
        )
