"""Terms of the step that nothing measured, fitted on published tables' development rows
(``data/step_terms.json``, fitted by ``benchmarks/fit_step_terms.py``, each term in or out
by leave-one-source-out error):

* ``nccl_latency``: a preset link's collectives costed as NCCL's tuner costs them
  (``interconnect/cost.py``), not ``2(N-1)`` x the preset's hop latency;
* ``contention_share`` (kappa): ``kappa x hidden`` added to the step for the communication
  backward hides (NCCL's kernels take SMs and memory bandwidth), at the default overlap;
* ``rank_spread`` (sigma): the wait for the slowest of N ranks,
  ``sigma x E[max of N standard normals] x compute``, where nothing on the host measured
  the step's spread.

kappa and sigma are one value for every link class (``link_class``) or one per class. The
data hold them per software stack (``STACKS``: ``legacy``, devices before Volta with the
TensorFlow 1.x parameter servers of 2017; ``modern``, the rest); the advice takes
``DEFAULT_STACK``'s (``FITTED``): the device catalogue has no device before Volta.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from importlib import resources

import numpy as np

from gpuscale.hardware.links import PRESETS

TERMS_FILE = "step_terms.json"
CLASSES = ("nvlink", "pcie_p2p", "pcie_no_p2p", "multinode")
STACKS = ("legacy", "modern")
DEFAULT_STACK = "modern"
NO_P2P = ("pcie-phb", "pcie-sys")  # PCIe presets through host memory


PerClass = tuple[tuple[str, float], ...]  # (link class, value) for every class


@dataclass(frozen=True, slots=True)
class StepTerms:
    """The fitted terms; ``contention_share`` and ``rank_spread`` one value, or
    ``(class, value)`` for each of ``CLASSES``."""

    nccl_latency: bool = False
    contention_share: float | PerClass = 0.0
    rank_spread: float | PerClass = 0.0

    def __post_init__(self) -> None:
        for name, field in (
            ("contention share", self.contention_share),
            ("rank spread", self.rank_spread),
        ):
            per_class = dict(field) if isinstance(field, tuple) else dict.fromkeys(CLASSES, field)
            if set(per_class) != set(CLASSES):
                raise ValueError(f"{name}: link classes are {CLASSES}, not {sorted(per_class)}")
            for cls, value in per_class.items():
                if not (0 <= value < 1 or (name == "contention share" and value == 1)):
                    raise ValueError(f"{name} not in [0, 1]: {value} ({cls})")

    def contention(self, link: str | None) -> float:
        return _of(self.contention_share, link)

    def spread(self, link: str | None) -> float:
        return _of(self.rank_spread, link)


def _of(field: float | PerClass, link: str | None) -> float:
    """A term's value on a network of ``link`` class: the class's own; for no class, the
    value every class shares, else 0 (no class it was fitted for)."""
    if not isinstance(field, tuple):
        return field
    per_class = dict(field)
    if link is not None:
        return per_class[link]
    values = set(per_class.values())
    return values.pop() if len(values) == 1 else 0.0


def _per_class(value: dict[str, float]) -> PerClass:
    return tuple((cls, float(value[cls])) for cls in CLASSES)


_TERMS = json.loads((resources.files("gpuscale") / "data" / TERMS_FILE).read_text())["terms"]
FITTED_BY_STACK = {
    stack: StepTerms(
        nccl_latency=bool(_TERMS["nccl_latency"]["value"]),
        contention_share=_per_class(_TERMS["contention_share"]["value"][stack]),
        rank_spread=_per_class(_TERMS["rank_spread"]["value"][stack]),
    )
    for stack in STACKS
}
FITTED = FITTED_BY_STACK[DEFAULT_STACK]
_current = [FITTED]
SPREAD_SAID = _TERMS["rank_spread"]["said"]  # the fitted spread in words ({spread}: the share)
STACK_SAID = _TERMS["rank_spread"]["said_stack"]  # the assumed stack, where stacks differ


def of_stack(stack: str) -> StepTerms:
    if stack not in FITTED_BY_STACK:
        raise ValueError(f"stack {stack!r} is none of {STACKS}")
    return FITTED_BY_STACK[stack]


def current() -> StepTerms:
    """The terms the step model uses now: ``FITTED``, or those ``using`` set."""
    return _current[-1]


@contextmanager
def using(terms: StepTerms) -> Iterator[StepTerms]:
    """The step model with ``terms`` inside the block (a fit's variants)."""
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


def link_class(link_name: str, nodes: bool) -> str | None:
    """The published tables' link class of a network (``benchmarks/published/README.md``):
    ``multinode`` for a network of several nodes (``nodes``), else by the node's link
    preset: ``nvlink``, ``pcie_no_p2p`` (through host memory), ``pcie_p2p``, or the class a
    preset is assumed to be of (an xGMI mesh: ``nvlink``, ``LinkPreset.assumed_class``);
    None for a custom or measured link."""
    if nodes:
        return "multinode"
    preset = link_name.split(" ")[0].lower()
    if preset.startswith("nvlink"):
        return "nvlink"
    if preset in PRESETS and PRESETS[preset].assumed_class is not None:
        return PRESETS[preset].assumed_class
    if preset in NO_P2P:
        return "pcie_no_p2p"
    return "pcie_p2p" if preset.startswith("pcie") else None


def straggler_ms(
    n: int, compute_ms: float, terms: StepTerms | None = None, link: str | None = None
) -> float:
    """The wait for the slowest of ``n`` ranks, ms: ``sigma x E[max of n] x compute_ms``."""
    if n < 2:
        return 0.0
    return (terms or current()).spread(link) * expected_max_normal(n) * compute_ms


def spread_said(link: str | None) -> str:
    """The fitted spread in words where it is above 0 on ``link`` class, else ``""``."""
    spread = current().spread(link)
    if spread <= 0:
        return ""
    said = SPREAD_SAID.format(spread=f"{spread:.1%}")
    # the stack assumed, where the fitted spread depends on it
    if len({terms.spread(link) for terms in FITTED_BY_STACK.values()}) > 1:
        said += STACK_SAID
    return said


def contention_ms(
    hidden_ms: float, terms: StepTerms | None = None, link: str | None = None
) -> float:
    """What the communication hidden behind backward costs it, ms: ``kappa x hidden_ms``."""
    return (terms or current()).contention(link) * max(hidden_ms, 0.0)
