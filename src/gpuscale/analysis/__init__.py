"""Pure functions over the scores tables: metrics, references, clusters, equilibrium,
uncertainty. The names below are imported on first use (PEP 562), so the light modules
(``criteria``) load without pandas."""

from typing import Any

_WHERE = {
    "AnalysisOptions": "analyze",
    "WorkloadAnalysis": "analyze",
    "analyze": "analyze",
    "as_json": "analyze",
    "cluster_systems": "clusters",
    "Equilibrium": "equilibrium",
    "equilibrium": "equilibrium",
    "equilibrium_by_family": "equilibrium",
    "scaling_table": "metrics",
    "bootstrap_intervals": "uncertainty",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        # lazy: pandas, scikit-learn (the analysis), not needed by gpuscale plan's criteria
        from importlib import import_module

        return getattr(import_module(f"gpuscale.analysis.{_WHERE[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
