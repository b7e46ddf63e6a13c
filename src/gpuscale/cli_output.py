"""Rendering tables for the terminal (rich), CSV or JSON: the CLI's only output path."""

from __future__ import annotations

import json
import math
from enum import Enum
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from gpuscale.formatting import number

if TYPE_CHECKING:  # pandas is imported when a table is printed: the CLI starts faster
    import pandas as pd


class Format(str, Enum):
    table = "table"
    csv = "csv"
    json = "json"


def jsonable(value: Any) -> Any:
    """Plain JSON values: NaN becomes null, numpy scalars become Python numbers."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    import pandas as pd

    if value is pd.NA or value is pd.NaT:
        return None
    return value


def print_frame(console: Console, frame: pd.DataFrame, fmt: Format, *, title: str = "") -> None:
    """Print a DataFrame as a rich table, CSV or a JSON list of records."""
    from pandas.api.types import is_numeric_dtype

    if fmt is Format.csv:
        console.file.write(frame.to_csv(index=False))
        return
    if fmt is Format.json:
        records = [jsonable(r) for r in frame.to_dict("records")]
        console.file.write(json.dumps(records, indent=2) + "\n")
        return
    table = Table(title=_escape(title) or None, show_lines=False, header_style="bold")
    for column in frame.columns:
        numeric = is_numeric_dtype(frame[column])
        table.add_column(
            _escape(str(column)), justify="right" if numeric else "left", overflow="fold"
        )
    for row in frame.itertuples(index=False):
        # rich markup in untrusted names must not be interpreted
        table.add_row(*(_escape(number(v, digits=4)) for v in row))
    console.print(table)


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
