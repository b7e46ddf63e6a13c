"""E(B) = E_min (1 + B / B_noise): the fit, the packaged reference convergence points, and
the gradient noise scale estimator (McCandlish et al. 2018, appendix A.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale.advice.model.convergence import convergence_for
from gpuscale.analysis.critical_batch import (
    ConvergenceModel,
    fit,
    noise_scale,
    rcp_fit,
    rcp_model_for,
)
from gpuscale.mlperf.rcp import rcp_points, workload_rcps
from gpuscale.tables.workloads import Unit


def test_fit_recovers_exact_points() -> None:
    truth = ConvergenceModel(2.0e6, 3000.0)
    batches = [256, 512, 1024, 4096, 8192]
    model = fit(batches, [truth.samples(b) for b in batches])
    assert model is not None
    assert model.e_min == pytest.approx(2.0e6, rel=1e-4)
    assert model.b_noise == pytest.approx(3000.0, rel=1e-3)


def test_fit_on_rcp_like_noisy_points() -> None:
    # RCP means of ~10 seeds scatter by a few percent around the curve
    rng = np.random.default_rng(7)
    truth = ConvergenceModel(1.0e6, 2000.0)
    batches = [128, 256, 512, 1024, 2048, 4096, 8192]
    samples = [truth.samples(b) * rng.normal(1, 0.03) for b in batches]
    model = fit(batches, samples)
    assert model is not None
    assert model.b_noise == pytest.approx(2000.0, rel=0.3)
    assert model.samples(1024) == pytest.approx(truth.samples(1024), rel=0.05)


def test_fit_needs_two_batch_sizes() -> None:
    assert fit([256, 256], [1e6, 1.1e6]) is None
    assert fit([], []) is None


@settings(max_examples=50, deadline=None)
@given(e_min=st.floats(1.0, 1e9), b_noise=st.floats(1.0, 1e6), b=st.floats(1.0, 1e6))
def test_samples_grow_and_steps_fall_with_the_batch(e_min, b_noise, b) -> None:
    model = ConvergenceModel(e_min, b_noise)
    assert model.samples(2 * b) >= model.samples(b)
    assert model.steps(2 * b) <= model.steps(b)
    # past the critical batch doubling buys less than halving the steps
    if b >= b_noise:
        assert model.steps(2 * b) > model.steps(b) / 2


def test_packaged_rcps_are_read_and_fitted() -> None:
    points = rcp_points("4.1.0", "bert")
    assert len(points) >= 4 and all(bs > 0 and e > 0 for bs, e in points)
    model = rcp_model_for("bert", "4.1.0")
    assert model is not None
    errors = [abs(model.samples(bs) / e - 1) for bs, e in points]
    assert max(errors) < 0.15  # the curve follows BERT's reference points
    # retinanet's RCPs were filed as ssd in 4.1
    assert rcp_model_for("retinanet", "4.1.0") is not None
    assert rcp_model_for("bert", "0.1.0") is None


def test_one_lookup_holds_what_the_advice_prices_with() -> None:
    """``workload_rcps`` reads the points under each name the workload's file had, the
    unit of the ruleset's round and, only where the ruleset has none, the rulesets that
    have them; ``rcp_fit`` fits them as :func:`rcp_model_for` does."""
    found = workload_rcps("retinanet", "4.1.0")  # filed as ssd in 4.1
    assert [name for name, _ in found.points] == ["retinanet", "ssd"]
    assert dict(found.points)["ssd"] == rcp_points("4.1.0", "ssd")
    assert rcp_fit(found) == rcp_model_for("retinanet", "4.1.0")
    assert (found.unit, found.elsewhere) == (Unit.EPOCHS, ())
    assert workload_rcps("unet3d", "3.1.0").unit is Unit.SAMPLES  # epochs up to 3.0.0
    missing = workload_rcps("retinanet", "1.1.0")  # ssd was SSD-ResNet34 then
    assert rcp_fit(missing) is None
    assert all(not points for _, points in missing.points)
    assert "1.1.0" not in missing.elsewhere and "4.1.0" in missing.elsewhere
    # the same rulesets, whichever ruleset without them is asked
    assert workload_rcps("retinanet", "6.1.0").elsewhere == missing.elsewhere


def sampled_norms(
    rng: np.random.Generator, steps: int, b_small: int, ranks: int, dim: int = 256
) -> tuple[list[float], list[float]]:
    """Per-step squared norms of per-rank means of b_small samples and of their global
    mean, for per-sample gradients G + noise with |G|^2 = 1 and tr(Sigma) = 64."""
    true = np.zeros(dim)
    true[0] = 1.0
    sigma = np.sqrt(64.0 / dim)
    local_sq, global_sq = [], []
    for _ in range(steps):
        samples = true + rng.normal(0, sigma, size=(ranks, b_small, dim))
        per_rank = samples.mean(axis=1)
        local_sq.append(float(np.mean(np.sum(per_rank**2, axis=1))))
        global_sq.append(float(np.sum(per_rank.mean(axis=0) ** 2)))
    return local_sq, global_sq


def test_noise_scale_estimator_on_synthetic_gradients() -> None:
    rng = np.random.default_rng(3)
    local, glob = sampled_norms(rng, steps=400, b_small=8, ranks=4)
    found = noise_scale(local, glob, 8, 32, n_boot=300)
    assert found is not None
    assert found.b_simple == pytest.approx(64.0, rel=0.2)
    assert found.low < 64.0 < found.high
    assert found.steps == 400


def test_noise_scale_needs_two_batches_and_signal() -> None:
    assert noise_scale([1.0, 1.0], [1.0, 1.0], 8, 8) is None  # one batch size
    assert noise_scale([1.0], [0.5], 8, 16) is None  # one step
    # steps that do not pair (a damaged bench record): no estimate, not an IndexError
    assert noise_scale([2.0, 1.9], [0.0], 8, 16) is None
    # global norm above the local one: no positive true-gradient estimate... or noise
    assert noise_scale([1.0, 1.0], [2.0, 2.0], 8, 16) is None


def test_the_noise_scale_interval_is_not_clipped_at_its_point() -> None:
    """Three steps whose global norm is barely below the local one: resamples that find
    no signal have an unbounded B_simple; dropping them (as before) put the interval's
    upper end on the point estimate itself (134, "95% interval 5-134")."""
    found = noise_scale([1.47, 2.20, 2.18], [1.05, 1.09, 0.87], 4, 8)
    assert found is not None
    assert found.low < found.b_simple < found.high
    assert found.high == math.inf
    model, _ = convergence_for(
        noise_scale=None,
        rcps=None,
        samples=1e6,
        reference_batch=4,
        measured=found,
    )
    assert model is not None and model.b_noise == found.b_simple
    # the words (explain.explanation) say the upper end unbounded, never "5-134"
    from gpuscale.advice.explain.explanation import measured_noise

    said = measured_noise(found)
    assert "unbounded" in said and f"-{round(found.b_simple)}" not in said
