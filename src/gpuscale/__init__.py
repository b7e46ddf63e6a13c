"""gpuscale: how deep-learning training scales with the number of accelerators."""

from gpuscale.mlperf import RoundTables, load_round, read_round, read_rounds

__all__ = ["RoundTables", "load_round", "read_round", "read_rounds"]
__version__ = "0.1.0"
