"""What the words read of an advice (``search.recommend.Advice``): its fields and the
views rendered from them. A Protocol, as ``explain`` imports no search module (the
``advice-explain-words`` contract) while ``Advice`` renders itself through ``explain``."""

from __future__ import annotations

from typing import Protocol

import pandas as pd

from gpuscale.advice.assumed import Assumption
from gpuscale.advice.calibration import Calibration
from gpuscale.advice.measured_runs import Disagreement, MeasuredCount
from gpuscale.advice.records import (
    BreakEven,
    Decision,
    FixedTerm,
    InputRate,
    OneDeviceRow,
    Picks,
    Qualifiers,
    RowIntervals,
)


def row_at(frame: pd.DataFrame, n: int) -> pd.Series:
    """The predictions' row at ``n`` accelerators."""
    return frame[frame["accelerators"] == n].iloc[0]


class AdviceView(Protocol):
    """The fields of ``search.recommend.Advice`` the words read, and its rendered views."""

    @property
    def decided(self) -> Decision: ...
    @property
    def picks(self) -> Picks: ...
    @property
    def break_even(self) -> BreakEven: ...
    @property
    def calibration(self) -> Calibration: ...
    @property
    def disagreements(self) -> tuple[Disagreement, ...]: ...
    @property
    def measured_counts(self) -> tuple[MeasuredCount, ...]: ...
    @property
    def below_mlperf(self) -> tuple[tuple[int, float, float, str], ...]: ...
    @property
    def qualifiers(self) -> Qualifiers: ...
    @property
    def input_rate(self) -> InputRate | None: ...
    @property
    def intervals(self) -> RowIntervals: ...
    @property
    def fixed_term(self) -> FixedTerm: ...
    @property
    def one_device(self) -> OneDeviceRow: ...
    @property
    def predictions(self) -> pd.DataFrame: ...
    @property
    def alternative(self) -> pd.DataFrame | None: ...
    @property
    def assumptions(self) -> tuple[Assumption, ...]: ...
    @property
    def decision(self) -> Decision: ...
    @property
    def caveats(self) -> tuple[str, ...]: ...
    @property
    def explanation(self) -> list[str]: ...
    @property
    def decision_line(self) -> int: ...
