"""Terms of the step that nothing measured, fitted on published tables' development rows
(``data/step_terms.json``; ``benchmarks/fit_step_terms.py`` fits them, choosing which are
in by leave-one-source-out error on those rows):

* ``nccl_latency``: a preset link's collectives costed as NCCL's tuner costs them
  (``advice/model/nccl_cost.py``), not ``2(N-1)`` x the preset's hop latency;
* ``contention_share`` (kappa): the communication backward hides still slows it, NCCL's
  kernels taking SMs and memory bandwidth: ``kappa x hidden`` is added to the step, where
  the overlap is the default (a measured overlap holds it already);
* ``rank_spread`` (sigma): the wait for the slowest of N ranks,
  ``sigma x E[max of N standard normals] x compute`` (about ``sigma sqrt(2 ln N)`` for
  large N), where the bench measured no slowdown at N > 1 (a measured one holds it).

``using`` sets other terms for a block (the fit evaluates the model with each term off)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

TERMS_FILE = "step_terms.json"


@dataclass(frozen=True, slots=True)
class StepTerms:
    """The fitted terms' values (see the module docstring)."""

    nccl_latency: bool = False
    contention_share: float = 0.0
    rank_spread: float = 0.0

    def __post_init__(self) -> None:
        if not (0 <= self.contention_share <= 1):
            raise ValueError(f"contention share must be in [0, 1], got {self.contention_share}")
        if not (0 <= self.rank_spread < 1):
            raise ValueError(f"rank spread must be in [0, 1), got {self.rank_spread}")


def _read() -> StepTerms:
    text = (resources.files("gpuscale") / "data" / TERMS_FILE).read_text()
    terms = json.loads(text)["terms"]
    return StepTerms(
        nccl_latency=bool(terms["nccl_latency"]["value"]),
        contention_share=float(terms["contention_share"]["value"]),
        rank_spread=float(terms["rank_spread"]["value"]),
    )


FITTED = _read()
_current = [FITTED]


def current() -> StepTerms:
    """The terms the step model uses now: ``FITTED``, or those ``using`` set."""
    return _current[-1]


@contextmanager
def using(terms: StepTerms) -> Iterator[StepTerms]:
    """The step model with ``terms`` inside the block (a fit's variants), then as before."""
    _current.append(terms)
    try:
        yield terms
    finally:
        _current.pop()


@cache
def expected_max_normal(n: int) -> float:
    """E[max of ``n`` independent standard normal draws] (0 for one draw; 0.564 for two,
    1.424 for eight), by quadrature of ``x d/dx Phi(x)^n``."""
    if n < 2:
        return 0.0
    x = np.linspace(-10.0, 10.0, 8001)
    cdf = np.array([0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x])
    pdf = np.exp(-(x**2) / 2) / math.sqrt(2 * math.pi)
    density = n * pdf * cdf ** (n - 1)
    return float(np.sum(x * density) * (x[1] - x[0]))


def straggler_ms(n: int, compute_ms: float, terms: StepTerms | None = None) -> float:
    """The wait for the slowest of ``n`` ranks whose compute of ``compute_ms`` spreads by
    ``rank_spread`` of itself: ``sigma x E[max of n] x compute``."""
    spread = (terms or current()).rank_spread
    return spread * expected_max_normal(n) * compute_ms if n > 1 else 0.0


def contention_ms(hidden_ms: float, terms: StepTerms | None = None) -> float:
    """What the communication hidden behind backward (``hidden_ms``) costs the backward:
    ``contention_share x hidden``."""
    return (terms or current()).contention_share * max(hidden_ms, 0.0)
