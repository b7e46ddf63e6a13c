"""gpuscale: how deep-learning training scales with the number of accelerators.

A notebook needs three calls::

    from gpuscale import load_round, scaling_table, equilibrium
    scores = load_round("v4.1").scores
    table = scaling_table(scores, "bert", reference="family")
    equilibrium(table)

and one for advice: ``gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb")``.
"""

import functools
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuscale.advice.api import Advice

# the analysis's calls (``gpuscale.analysis``)
_ANALYSIS = (
    "AnalysisOptions",
    "analyze",
    "energy_table",
    "equilibrium",
    "scaling_table",
    "trend_table",
)


def __getattr__(name: str) -> Any:
    # Loaded when first asked for: the reading side and the analysis pull in pandas,
    # and the command line wants to start before it.
    if name in ("RoundTables", "load_round", "read_round", "read_rounds"):
        from gpuscale import mlperf  # lazy: pandas (the MLPerf readers)

        return getattr(mlperf, name)
    if name == "advise":
        from gpuscale.advice.api import advise_by_keywords  # lazy: pandas and numpy

        # help(gpuscale.advise) titled as it is called, its signature and docstring kept
        @functools.wraps(advise_by_keywords)
        def advise(*args: object, **kwargs: object) -> "Advice":
            return advise_by_keywords(*args, **kwargs)  # type: ignore[arg-type]

        advise.__name__ = advise.__qualname__ = "advise"
        globals()["advise"] = advise  # one function: gpuscale.advise is gpuscale.advise
        return advise
    if name == "AdviceRequest":
        from gpuscale.advice.request import AdviceRequest  # lazy: the advice's request

        return AdviceRequest
    if name in ("plan", "PlanRequest"):
        from gpuscale import planning  # lazy: the plan (pandas for its DataFrame)

        return getattr(planning, name)
    if name in _ANALYSIS:
        from gpuscale import analysis  # lazy: pandas and numpy (the analysis)

        return getattr(analysis, name)
    raise AttributeError(f"module 'gpuscale' has no attribute {name!r}")


__all__ = [
    "AdviceRequest",
    "AnalysisOptions",
    "PlanRequest",
    "RoundTables",
    "advise",
    "analyze",
    "energy_table",
    "equilibrium",
    "load_round",
    "plan",
    "read_round",
    "read_rounds",
    "scaling_table",
    "trend_table",
]
from gpuscale.version import __version__ as __version__  # noqa: E402


def __dir__() -> list[str]:
    """What ``__all__`` offers, the lazily loaded names too, and the module's own dunder
    names; never a name the module merely imported (``Any``) or a submodule."""
    return sorted({*__all__, *(n for n in globals() if n.startswith("__"))})
