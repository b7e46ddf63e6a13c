"""Reading MLPerf Training rounds: scanning, normalising, official scoring."""

from gpuscale.mlperf.bundled import bundled_rounds, load_round
from gpuscale.mlperf.ingest import RoundTables, read_round, read_rounds

__all__ = ["RoundTables", "bundled_rounds", "load_round", "read_round", "read_rounds"]
