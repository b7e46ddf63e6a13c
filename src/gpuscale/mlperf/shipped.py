"""Which rounds the package ships (its Parquet tables in ``gpuscale/data``), read from the
tables themselves: what ``mlperf.bundled`` loads, and the round a message gives as its
example (the newest shipped), never a name written into the message."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from gpuscale.tables import round_key

DATA_DIR = Path(str(resources.files("gpuscale") / "data"))


def bundled_rounds() -> list[str]:
    """The rounds shipped with the package, oldest first."""
    import pandas as pd  # lazy: a path's round is told without pandas

    path = DATA_DIR / "scores.parquet"
    if not path.exists():
        return []
    rounds = pd.read_parquet(path, columns=["round"])["round"].unique().tolist()
    return sorted(rounds, key=round_key)


def example_round(fallback: str) -> str:
    """The round a message gives as an example of one (``--round v5.0``): the newest
    shipped, ``fallback`` where the package ships none."""
    return next(reversed(bundled_rounds()), fallback)
