"""gpuscale: how deep-learning training scales with the number of accelerators.

A notebook needs three calls::

    from gpuscale import load_round, scaling_table, equilibrium
    scores = load_round("v4.1").scores
    table = scaling_table(scores, "bert", reference="family")
    equilibrium(table)
"""

from gpuscale.analysis import analyze, equilibrium, scaling_table
from gpuscale.mlperf import RoundTables, load_round, read_round, read_rounds

__all__ = [
    "RoundTables",
    "analyze",
    "equilibrium",
    "load_round",
    "read_round",
    "read_rounds",
    "scaling_table",
]
__version__ = "0.1.0"
