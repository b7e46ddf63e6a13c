"""The tables as files (``gpuscale ingest``, ``gpuscale dataset``): what Parquet and CSV hold.

In memory a table's text column holds ``""`` where it says nothing and its global batch is a
``float64`` (NaN where unknown, as the analyses compute with it). In the files, read with
``pd.read_parquet`` or ``pd.read_csv`` or opened in a spreadsheet:

* a count held as a float (``global_batch_size``: samples per step) is a whole number, written
  without ``.0`` (``Int64`` in Parquet, empty where unknown); one a log wrote as a fraction
  keeps its column ``float64``, the value as logged;
* an empty text cell is missing in both files (null in Parquet, an empty field in CSV), so
  pandas reads the same NaN from either: CSV cannot tell ``""`` from missing;
* in CSV, a text cell starting with ``=``, ``+``, ``-``, ``@``, a tab, a carriage return or
  ``'`` is written with one ``'`` before it (OWASP's defence against CSV injection: a
  system name from a log, ``=HYPERLINK(...)``, is shown as text, never run as a formula).
  Dropping one leading ``'`` from a cell that has one gives the value back
  (``frame[c].str.removeprefix("'")``); the Parquet holds the values as logged.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas only when tables are written: the CLI starts without it
    import pandas as pd

# Counts the tables hold as float64 (for the analyses' arithmetic), written as whole numbers.
WHOLE_NUMBER_COLUMNS: tuple[str, ...] = ("global_batch_size",)
# The first characters a spreadsheet reads a cell as a formula by (OWASP), and the quote
# that marks one escaped: escaped too, so dropping one leading quote is exact.
FORMULA_STARTS: tuple[str, ...] = ("=", "+", "-", "@", "\t", "\r", "'")


def _is_text(column: pd.Series) -> bool:
    return str(column.dtype) in ("object", "str", "string")


def with_whole_counts(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its counts held as floats (``WHOLE_NUMBER_COLUMNS``) as ``Int64``
    where every value is whole: what the files and ``gpuscale scores -f csv|json`` show
    (``256``, never ``256.0``); a copy."""
    out = frame.copy()
    for name in WHOLE_NUMBER_COLUMNS:
        if name in out and str(out[name].dtype) == "float64":
            known = out[name].dropna()
            if (known == known.round()).all():
                out[name] = out[name].astype("Int64")
    return out


def as_parquet(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as its Parquet file holds it: counts whole (:func:`with_whole_counts`)
    and empty text missing."""
    out = with_whole_counts(frame)
    for name in out.columns:
        if _is_text(out[name]):
            out[name] = out[name].mask(out[name] == "")
    return out


def formula_safe(cell: object) -> object:
    """A text cell a spreadsheet would read as a formula (``FORMULA_STARTS``) with one
    leading ``'``; any other cell as it is (every CSV gpuscale writes, files and stdout)."""
    if isinstance(cell, str) and cell.startswith(FORMULA_STARTS):
        return "'" + cell
    return cell


def as_csv(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as its CSV file holds it: :func:`as_parquet`'s, with text cells a
    spreadsheet would read as a formula escaped by one leading ``'``."""
    out = as_parquet(frame)
    for name in out.columns:
        if _is_text(out[name]):
            out[name] = out[name].map(formula_safe, na_action="ignore")
    return out


def write_table(frame: pd.DataFrame, folder: Path, name: str, *, csv: bool = True) -> None:
    """Write ``frame`` as ``folder/name.parquet`` (and ``name.csv``), as the files hold it."""
    as_parquet(frame).to_parquet(folder / f"{name}.parquet", index=False, compression="zstd")
    if csv:
        as_csv(frame).to_csv(folder / f"{name}.csv", index=False)
