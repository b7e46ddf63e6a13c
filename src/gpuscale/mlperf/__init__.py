"""MLPerf Training rules and reading rounds: MLLOG records, system descriptions, official
scoring; the tables are defined in ``gpuscale.tables``."""

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # what __getattr__ gives, for readers and type checkers
    from gpuscale.mlperf.bundled import bundled_rounds
    from gpuscale.mlperf.ingest import read_round, read_rounds
    from gpuscale.mlperf.load import load_round
    from gpuscale.tables import RoundTables

__all__ = ["RoundTables", "bundled_rounds", "load_round", "read_round", "read_rounds"]


def __getattr__(name: str) -> object:
    """The readers, imported on first use (PEP 562): a submodule such as
    ``gpuscale.mlperf.rules`` (which ``gpuscale.names`` reads) loads without pandas."""
    if name == "bundled_rounds":
        # lazy: pandas and pyarrow, not needed by the catalogue
        from gpuscale.mlperf import bundled

        return bundled.bundled_rounds
    if name == "load_round":
        # lazy: as --round reads a round, bundled or fetched (``mlperf.load``)
        from gpuscale.mlperf import load

        return load.load_round
    if name in ("read_round", "read_rounds"):
        # lazy: the round reader, not needed by the catalogue
        from gpuscale.mlperf import ingest

        return getattr(ingest, name)
    if name == "RoundTables":
        # lazy: kept with the readers it belongs to (the tables package itself is light)
        from gpuscale.tables import RoundTables

        return RoundTables
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
