"""A one-device step of an hour or more (seconds typed as ms?) is said, as a warning of
its own, where the calibration is built; the advice stands as for a step just under it."""

from __future__ import annotations

import gpuscale
from gpuscale.advice.calibrate.build import HOUR_MS
from gpuscale.advice.types import FindingKind

from ..golden import Golden

COMMON = dict(params=1e9, batch=64, link="pcie-phb")


def test_a_step_of_an_hour_is_said_and_the_count_stands(golden: Golden) -> None:
    under = gpuscale.advise(step_ms=HOUR_MS - 1, **COMMON)
    hour = gpuscale.advise(step_ms=HOUR_MS, **COMMON)
    assert FindingKind.STEP_OVER_AN_HOUR not in [w.kind for w in under.decided.warnings]
    (said,) = [w for w in hour.decided.warnings if w.kind is FindingKind.STEP_OVER_AN_HOUR]
    assert said["step_ms"] == HOUR_MS
    # not an implausible input: the count and its interval are the step's just under it
    assert not hour.calibration.said.implausible
    assert hour.recommended == under.recommended > 1
    worded = [w for w in hour.decision.warnings if w not in under.decision.warnings]
    golden.check("advice/decision", "a step of an hour", worded)
