"""Known answers for the scaling-law fits (the baselines of benchmarks/advise_accuracy.py):
times drawn from a law with set parameters are recovered, and the fitted curve goes on
where the law does (Amdahl's floor, the USL's turn past its optimum)."""

from __future__ import annotations

import numpy as np
import pytest

from gpuscale.analysis.scaling_laws import fit_law

COUNTS = np.array([8.0, 16.0, 32.0, 64.0, 128.0])


def test_amdahl_times_are_recovered_and_extrapolated() -> None:
    # T0 = 100 min at 8 devices, 3% serial: T(256) = 100 (0.03 + 0.97 / 32)
    times = 100.0 * (0.03 + 0.97 / (COUNTS / 8))
    fitted = fit_law("amdahl", COUNTS, times, 8.0)
    assert fitted(np.array([256.0]))[0] == pytest.approx(100.0 * (0.03 + 0.97 / 32), rel=1e-4)
    # the serial part is a floor: no count goes below it
    assert fitted(np.array([1e6]))[0] == pytest.approx(3.0, rel=1e-3)


def test_usl_recovers_the_turn_past_its_optimum() -> None:
    s, k = 0.02, 0.001  # optimum at r = sqrt((1 - s) / k) ~ 31 (N ~ 250)
    r = COUNTS / 8
    times = 50.0 * (1 + s * (r - 1) + k * r * (r - 1)) / r
    fitted = fit_law("usl", COUNTS, times, 8.0)
    ahead = np.array([256.0, 1024.0, 4096.0])
    r_ahead = ahead / 8
    truth = 50.0 * (1 + s * (r_ahead - 1) + k * r_ahead * (r_ahead - 1)) / r_ahead
    np.testing.assert_allclose(fitted(ahead), truth, rtol=1e-3)
    assert fitted(np.array([4096.0]))[0] > fitted(np.array([256.0]))[0]  # time rises again


def test_ideal_times_fit_amdahl_with_no_serial_part() -> None:
    times = 400.0 / COUNTS
    fitted = fit_law("amdahl", COUNTS, times, 8.0)
    assert fitted(np.array([1024.0]))[0] == pytest.approx(400.0 / 1024, rel=1e-3)


def test_an_unknown_law_is_refused() -> None:
    with pytest.raises(KeyError):
        fit_law("gustafson", COUNTS, 400.0 / COUNTS, 8.0)
