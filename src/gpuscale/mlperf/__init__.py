"""MLPerf Training rules and reading rounds: MLLOG records, system descriptions, official
scoring; the tables are defined in ``gpuscale.tables``."""

from gpuscale.mlperf.bundled import bundled_rounds, load_round
from gpuscale.mlperf.ingest import read_round, read_rounds
from gpuscale.tables import RoundTables

__all__ = ["RoundTables", "bundled_rounds", "load_round", "read_round", "read_rounds"]
