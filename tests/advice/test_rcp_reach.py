"""A global batch kept far beyond every batch the workload's reference convergence points
(RCPs) were run at is said: the samples to converge there, and so the time to train, are
the fit's form alone, carried past its points."""

from __future__ import annotations

import gpuscale
from gpuscale.advice.request_fields import DEFAULT_RULESET
from gpuscale.advice.types import FindingKind
from gpuscale.mlperf.rcp import rcp_points

BERT = dict(params=340e6, step_ms=200, batch=48, device_name="H100", workload="bert")


def _said(advice, kind):
    return [w for w in advice.calibration.said.warnings if getattr(w, "kind", None) is kind]


def test_a_global_batch_far_beyond_the_reference_points_is_said() -> None:
    largest = max(batch for batch, _ in rcp_points(DEFAULT_RULESET, "bert"))
    assert largest == 16384  # BERT's largest reference run in mlperf-logging's RCPs
    far = gpuscale.advise(**BERT, global_batch=10**8)
    said = _said(far, FindingKind.RCP_EXTRAPOLATED)
    assert [(w["batch"], w["largest"], round(w["times"])) for w in said] == [(10**8, largest, 6104)]
    # the workload's own samples (E(B) at that batch), not the default 10M, are trained:
    # no "fewer samples than one step" beside it
    assert _said(far, FindingKind.TYPED_UNDER_FLOOR) == []
    within = gpuscale.advise(**BERT, global_batch=2 * largest)  # at the reach: unsaid
    assert _said(within, FindingKind.RCP_EXTRAPOLATED) == []
