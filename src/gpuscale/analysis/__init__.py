"""Pure functions over the scores tables: metrics, references, clusters, equilibrium,
bootstrap intervals of the scores."""

from gpuscale.analysis.analyze import AnalysisOptions, WorkloadAnalysis, analyze
from gpuscale.analysis.clusters import cluster_systems
from gpuscale.analysis.document import as_json
from gpuscale.analysis.energy_per_result import energy_table
from gpuscale.analysis.equilibrium import Equilibrium, equilibrium, equilibrium_by_family
from gpuscale.analysis.metrics import scaling_table
from gpuscale.analysis.score_intervals import bootstrap_intervals
from gpuscale.analysis.trends import trend_table

__all__ = [
    "AnalysisOptions",
    "Equilibrium",
    "WorkloadAnalysis",
    "analyze",
    "as_json",
    "bootstrap_intervals",
    "cluster_systems",
    "energy_table",
    "equilibrium",
    "equilibrium_by_family",
    "scaling_table",
    "trend_table",
]
