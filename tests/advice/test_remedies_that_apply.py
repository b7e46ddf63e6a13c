""" "What would change it" offers only cures that apply (a user walk): for a model whose
gradients fit in one DDP bucket, larger buckets change nothing, and where the advice
already accumulates, "gradient accumulation" is not news. The rows: a fresh-clone walk's
``gpuscale bench --backend gloo --nproc 1,2 --model mymodel.py:make --steps 5`` (twice)
on a 2-core machine, a 19k-parameter model (one 77 kB bucket), in
``cpu_tiny_model_gloo.jsonl``."""

from __future__ import annotations

from pathlib import Path

import gpuscale

ROWS = Path(__file__).with_name("cpu_tiny_model_gloo.jsonl")


def test_a_latency_bound_one_bucket_model_is_not_told_larger_buckets() -> None:
    advice = gpuscale.advise(bench=ROWS)
    assert advice.inputs is not None
    # the premise, from the data: latency decides, the gradients fit in one bucket
    assert advice.decision.change == "latency"
    assert advice.inputs.model.grad_bytes < advice.inputs.bucket_mb * 2**20
    said = next(s for s in advice.explanation if s.startswith("What would change it"))
    assert "larger DDP buckets" not in said
    if advice.decision.accum > 1:
        assert f"more than the {advice.decision.accum} accumulation steps" in said
    assert "a faster link would barely matter" in said


def test_one_leave_one_out_error_is_no_spread() -> None:
    """An "80% interval" from one error said more than one error knows (a user walk: a
    factor of 20.4 "from 1 leave-one-out prediction"); a small single error would have
    given a narrower interval than no measurement at all."""
    from gpuscale.advice.step_error import EXTRAPOLATED, from_residuals

    one = from_residuals([0.01], 2, "m")
    assert one.width_log >= EXTRAPOLATED and "measure no spread" in one.source
    many = from_residuals([0.01, -0.02, 0.015, -0.01], 2, "m")
    assert many.width_log < EXTRAPOLATED and "no spread" not in many.source
