"""Fits computed once per data version.

For the bundled rounds the calibrated fits ship with the package
(``gpuscale/data/plan_fits.json``), stamped with the model's version and the SHA-256 of
the bundled ``scores.parquet``: a ``gpuscale plan`` reads them in milliseconds, without
pandas. When the stamp does not match (the bundled data or the model changed, and the file
was not rebuilt) the fits are computed instead (seconds), as for any other data, and kept
for the rest of the process (keyed by a hash of the scores). Rebuild the file with::

    python -m gpuscale.planning.cache
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from gpuscale.planning.records import Facts, Fits
from gpuscale.planning.shape import MODEL_VERSION

if TYPE_CHECKING:
    import pandas as pd

DATA_DIR = Path(str(resources.files("gpuscale") / "data"))
FITS_FILE = DATA_DIR / "plan_fits.json"
# the plan's 80% intervals' coverage per class, measured by the forward backtest of the
# bundled rounds (``benchmarks/plan_accuracy.py --part forward`` writes it)
COVERAGE_FILE = DATA_DIR / "plan_coverage.json"
SCORES_FILE = DATA_DIR / "scores.parquet"
_MEMO: dict[str, Fits] = {}  # fits of data given in this process, by hash
_MEMO_SIZE = 4


def bundled_version() -> str:
    """The stamp of the bundled data and model: ``MODEL_VERSION:sha256(scores.parquet)``."""
    return f"{MODEL_VERSION}:{hashlib.sha256(SCORES_FILE.read_bytes()).hexdigest()}"


def bundled_fits() -> Fits | None:
    """The shipped fits of the bundled rounds; None when missing or stale."""
    try:
        stored = json.loads(FITS_FILE.read_text())
    except (OSError, ValueError):
        return None
    return stored["fits"] if stored.get("version") == bundled_version() else None


def bundled_coverage() -> Facts | None:
    """The measured coverage of the bundled rounds' intervals (``rounds``, ``classes``:
    per class ``coverage_pct`` and ``forecasts``); None when missing or stale."""
    try:
        stored = json.loads(COVERAGE_FILE.read_text())
    except (OSError, ValueError):
        return None
    return stored if stored.get("version") == bundled_version() else None


def fits_of(scores: pd.DataFrame) -> Fits:
    """The calibrated fits of ``scores`` (computed once per process and data), with each
    family's devices per node (``per_node``: ``systems.node_sizes``)."""
    # lazy: pandas and the fit (numpy), only when the shipped fits cannot serve
    from pandas.util import hash_pandas_object

    # lazy: the fit itself (numpy, pandas), as above
    from gpuscale.planning.calibrate import calibrated_fits

    # lazy: the systems table (pandas), as above
    from gpuscale.planning.systems import COLUMNS, measured, node_sizes

    systems = measured(scores)
    key = str(hash_pandas_object(systems[COLUMNS], index=False).sum())
    if key not in _MEMO:
        if len(_MEMO) >= _MEMO_SIZE:
            _MEMO.pop(next(iter(_MEMO)))
        _MEMO[key] = json.loads(json.dumps(calibrated_fits(systems)))  # the shipped form
    # each family's devices per node, from every system (not only those fitted on)
    return _MEMO[key] | {"per_node": node_sizes(scores)}


def default_fits() -> Fits:
    """The fits of every bundled round: shipped, or computed when stale."""
    found = bundled_fits()
    if found is not None:
        return found
    # lazy: pandas, only when the shipped fits are stale
    from gpuscale.mlperf.bundled import load_round

    return fits_of(load_round().scores)


def write_bundled_fits() -> Path:
    """Compute the bundled rounds' fits and write them with their stamp."""
    # lazy: pandas, only when rebuilding
    from gpuscale.mlperf.bundled import load_round

    _MEMO.clear()
    fits = fits_of(load_round().scores)
    FITS_FILE.write_text(json.dumps({"version": bundled_version(), "fits": fits}) + "\n")
    return FITS_FILE


if __name__ == "__main__":
    print(f"wrote {write_bundled_fits()}")
