"""What the hardware tables share: :class:`Source`, where a figure comes from, and
:func:`data_rows`, a bundled CSV table (``gpuscale/data``) read as its rows."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from importlib import resources


@dataclass(frozen=True, slots=True)
class Source:
    """Where a figure comes from: its id, the citation and the address."""

    id: str
    citation: str
    url: str


def data_rows(name: str) -> list[dict[str, str]]:
    """The rows of the bundled table ``gpuscale/data/<name>`` (CSV with a header)."""
    text = (resources.files("gpuscale") / "data" / name).read_text(encoding="utf-8")
    return list(csv.DictReader(text.splitlines()))
