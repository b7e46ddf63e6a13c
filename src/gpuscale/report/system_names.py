"""The name the report gives a system: the one its workload's systems table shows.

A reader finds a system the words name by looking for it in the table, so the words use
the table's System cell (the system name; with the system id where two rows of the same
submitter and count share a name), never the id alone (``Krai 7920T_2xA5000_hdd`` is
a row the table calls "Dell Precision 7920 Tower with 2x A5000 using HDD").
"""

from __future__ import annotations

import pandas as pd

from gpuscale.quantities import named


def system_cells(table: pd.DataFrame) -> list[str]:
    """Each row's System cell in a workload's systems table (``table``: its analysed
    rows), in the table's order."""
    alike = table.duplicated(["submitter", "system_name", "accelerators"], keep=False)
    return [
        f"{name} ({system_id})" if same else str(name)
        for name, system_id, same in zip(
            table["system_name"], table["system_id"], alike, strict=True
        )
    ]


def is_reference(table: pd.DataFrame) -> pd.Series:
    """Whether each row of ``table`` is its reference (the same org and system id)."""
    return (table["org"] == table["reference_org"]) & (
        table["system_id"] == table["reference_system_id"]
    )


def shown_name(table: pd.DataFrame, org: object, system_id: object) -> str:
    """``Krai Dell Precision 7920 Tower with 2x A5000 using HDD``: the submitter and the
    System cell of the row of ``table`` with that org and system id (its first)."""
    rows = ((table["org"] == org) & (table["system_id"] == system_id)).to_numpy()
    if not rows.any():
        return str(system_id)
    where = int(rows.argmax())
    return named(table["submitter"].iloc[where], system_cells(table)[where])
