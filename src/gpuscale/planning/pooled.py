"""The plan's model of one workload, every accelerator family at once (numpy; no pandas).

Each measured system ``i`` (family ``f``, round ``R``, ``N`` devices, global batch ``B``,
time ``T`` minutes) gives its device-minutes per expected sample

    ``y_i = log(T_i N_i / E_R(B_i))``,

``E_R(B) = E_min (1 + B / B_noise)`` from the round's RCPs (``gpuscale.analysis.
critical_batch``): what ideal scaling keeps constant. The model, in ``log`` units,

    ``y = a_f + d_{f,R} + e_R + s(log2 N) + u_f(log2 N) + c log2(B / N)``

* ``a_f``: the family's level on this workload (the accelerator's speed);
* ``d_{f,R}``: the family's level in round ``R`` (its software gets faster), a random walk
  over the rounds it ran: a round's step is shrunk towards no step by how many systems
  support it (``Penalties.round_step`` systems' worth of "no change"). There is no level
  shared by the families of a round: a new chip's software maturing (B200 from v4.1 to
  v5.0: -8% on BERT) says nothing of a mature one's at a count it did not rerun;
* ``e_R``: the level of the workload's era (``gpuscale.planning.systems``: a new benchmark
  or target), free, 0 in the first: every family's level moves with it;
* ``s``: the shape of the scaling law, **shared by every family** of the workload (its
  communication and convergence behaviour carry over between accelerators), piecewise
  linear in ``log2 N`` with a knot at every power of two, smooth (second differences
  penalised), 0 at 8 devices, and drawn faintly towards 0 (ideal scaling), which decides
  only where no result measures it (a workload run at one count);
* ``u_f``: the family's own departure from that shape, shrunk towards none (a family
  measured at many counts keeps its shape; one measured at one count takes the shared);
* ``c log2(B / N)``: the per-device batch: more samples per device and step amortise the
  gradient exchange (``c < 0`` when they do).

Fitted by penalised least squares (one linear solve, milliseconds) reweighted five times
with Huber weights at 1.5 robust standard deviations (1.4826 x the median absolute
residual), so one odd submission (a DeepSpeed Llama2 at 4x the others' time) does not
move the law. :func:`fit_workload` returns plain data (``WorkloadFit``); the prediction is
in ``gpuscale.planning.predict``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuscale.planning.records import FamilyFit, WorkloadLevels
from gpuscale.planning.shape import KNOTS, PIN
from gpuscale.tables.workloads import round_key

HUBER = 1.5  # robust standard deviations before a residual is down-weighted
MAD_SCALE = 1.4826  # median absolute deviation -> standard deviation (normal)


@dataclass(frozen=True, slots=True)
class Penalties:
    """Each penalty is worth that many systems' squared log error (set before the
    forward-in-time benchmark was run; ``benchmarks/plan_accuracy.py``)."""

    round_step: float = 2.0  # a round's step of level vs "no change"
    shape_smooth: float = 1.0  # second differences of the shared shape s
    shape_ridge: float = 1e-6  # s towards 0 (ideal scaling) where nothing measures it
    family_shape: float = 2.0  # ridge on the family's departure u_f
    family_smooth: float = 4.0  # second differences of u_f
    batch: float = 1.0  # ridge on c
    pin: float = 1e6  # s(8) = 0, d of a family's first round = 0


DEFAULT = Penalties()


def hats(x: np.ndarray) -> np.ndarray:
    """Piecewise-linear basis in ``x = log2 N`` (n x KNOTS): linear interpolation between
    integer knots, continued linearly beyond the first and last (``shape.hat_values`` is
    its one-point twin in plain Python)."""
    x = np.asarray(x, float)
    low = np.clip(np.floor(x), 0, KNOTS - 2).astype(int)
    frac = x - low
    out = np.zeros((len(x), KNOTS))
    rows = np.arange(len(x))
    out[rows, low] = 1 - frac
    out[rows, low + 1] = frac
    return out


def _second_differences(size: int) -> np.ndarray:
    d = np.zeros((size - 2, size))
    for k in range(size - 2):
        d[k, k : k + 3] = (1.0, -2.0, 1.0)
    return d


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where each parameter group sits in the parameter vector."""

    families: list[str]
    family_rounds: list[tuple[str, str]]
    shaped: list[str]  # families with their own shape departure (>= 2 counts)
    eras: int

    @property
    def size(self) -> int:
        return self.shape_at + KNOTS * (1 + len(self.shaped)) + 1

    @property
    def era_at(self) -> int:
        return len(self.families)

    @property
    def family_round_at(self) -> int:
        return self.era_at + self.eras

    @property
    def shape_at(self) -> int:
        return self.family_round_at + len(self.family_rounds)

    def own_shape_at(self, family: str) -> int:
        return self.shape_at + KNOTS * (1 + self.shaped.index(family))

    @property
    def batch_at(self) -> int:
        return self.size - 1


def _layout(family: list[str], rounds: list[str], x: np.ndarray, eras: int) -> _Layout:
    families = sorted(set(family))
    pairs = sorted(set(zip(family, rounds, strict=True)), key=lambda p: (p[0], round_key(p[1])))
    shaped = [f for f in families if len({v for g, v in zip(family, x, strict=True) if g == f}) > 1]
    return _Layout(families, pairs, shaped, eras)


def _design(lay: _Layout, family: list[str], rounds: list[str], x, log_b, era) -> np.ndarray:
    n = len(family)
    out = np.zeros((n, lay.size))
    rows = np.arange(n)
    out[rows, [lay.families.index(f) for f in family]] = 1
    out[rows, lay.era_at + np.asarray(era, int)] = 1
    pair_index = {p: i for i, p in enumerate(lay.family_rounds)}
    out[rows, [lay.family_round_at + pair_index[p] for p in zip(family, rounds, strict=True)]] = 1
    basis = hats(x)
    out[:, lay.shape_at : lay.shape_at + KNOTS] = basis
    for i, f in enumerate(family):
        if f in lay.shaped:
            start = lay.own_shape_at(f)
            out[i, start : start + KNOTS] = basis[i]
    out[:, lay.batch_at] = log_b
    return out


def _penalty(lay: _Layout, pen: Penalties) -> np.ndarray:
    """The quadratic penalty matrix (sum of lambda D'D)."""
    parts: list[tuple[float, np.ndarray]] = []

    def rows(weight: float, pairs: list[tuple[int, float]]) -> None:
        row = np.zeros(lay.size)
        for index, value in pairs:
            row[index] = value
        parts.append((weight, row[None, :]))

    rows(pen.pin, [(lay.era_at, 1.0)])
    previous: dict[str, int] = {}
    for j, (f, _) in enumerate(lay.family_rounds):
        at = lay.family_round_at + j
        if f in previous:
            rows(pen.round_step, [(at, 1.0), (previous[f], -1.0)])
        else:
            rows(pen.pin, [(at, 1.0)])
        previous[f] = at
    smooth = _second_differences(KNOTS)
    block = np.zeros((KNOTS - 2, lay.size))
    block[:, lay.shape_at : lay.shape_at + KNOTS] = smooth
    parts.append((pen.shape_smooth, block))
    ridge = np.zeros((KNOTS, lay.size))
    ridge[np.arange(KNOTS), lay.shape_at + np.arange(KNOTS)] = 1
    parts.append((pen.shape_ridge, ridge))
    rows(pen.pin, [(lay.shape_at + PIN, 1.0)])
    for f in lay.shaped:
        start = lay.own_shape_at(f)
        block = np.zeros((KNOTS - 2, lay.size))
        block[:, start : start + KNOTS] = smooth
        parts.append((pen.family_smooth, block))
        ridge = np.zeros((KNOTS, lay.size))
        ridge[np.arange(KNOTS), start + np.arange(KNOTS)] = 1
        parts.append((pen.family_shape, ridge))
    rows(pen.batch, [(lay.batch_at, 1.0)])
    for i in range(lay.era_at + lay.eras):  # keeps the solve regular (an era no one spans)
        rows(1e-6, [(i, 1.0)])
    return sum(w * d.T @ d for w, d in parts)


def robust_scale(residuals: np.ndarray) -> float:
    """1.4826 x the median absolute residual (a standard deviation that outliers do not
    own), floored at 0.01."""
    r = np.asarray(residuals, float)
    return max(MAD_SCALE * float(np.median(np.abs(r))) if len(r) else 0.0, 0.01)


def solve(
    family: list[str],
    rounds: list[str],
    x: np.ndarray,
    log_b: np.ndarray,
    y: np.ndarray,
    era: np.ndarray,
    pen: Penalties = DEFAULT,
) -> tuple[_Layout, np.ndarray, np.ndarray, np.ndarray]:
    """(layout, parameters, residuals, weights) of the robust penalised fit."""
    lay = _layout(family, rounds, x, int(np.max(era)) + 1)
    design = _design(lay, family, rounds, x, log_b, era)
    penalty = _penalty(lay, pen)
    weights = np.ones(len(y))
    for _ in range(5):
        lhs = design.T @ (design * weights[:, None]) + penalty
        theta = np.linalg.solve(lhs, design.T @ (weights * y))
        resid = y - design @ theta
        scale = robust_scale(resid)
        weights = np.minimum(1.0, HUBER * scale / np.maximum(np.abs(resid), 1e-12))
    return lay, theta, resid, weights


def levels(lay: _Layout, theta: np.ndarray) -> WorkloadLevels:
    """The fitted parameters as plain data: per family its level, round levels, shape
    departure; the shared shape and batch slope."""
    families: dict[str, FamilyFit] = {}
    for i, f in enumerate(lay.families):
        own = None
        if f in lay.shaped:
            start = lay.own_shape_at(f)
            own = [float(v) for v in theta[start : start + KNOTS]]
        families[f] = {
            "level": float(theta[i]),
            "round_level": {
                r: float(theta[lay.family_round_at + j])
                for j, (g, r) in enumerate(lay.family_rounds)
                if g == f
            },
            "shape": own,
        }
    return {
        "families": families,
        "era_level": [float(theta[lay.era_at + k]) for k in range(lay.eras)],
        "shape": [float(v) for v in theta[lay.shape_at : lay.shape_at + KNOTS]],
        "batch_slope": float(theta[lay.batch_at]),
    }
