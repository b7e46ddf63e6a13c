"""Where a result's power was measured: ``AC`` (at the wall) or ``DC`` (after the power
supplies), as its power logs state it, else as its names declare it.

A node or switch power log written by MLCommons' ``power_measurement.py`` states it on its
``conversion_eff`` line (``metadata.measurement_type``: Dell's v4.1 and Lenovo's v5.0
logs say ``AC``; the tool writes ``AC`` unless told otherwise). v4.0's logs state none;
their folders do (Sustainable Metal Cloud's ``smc-ac-power``, ``smc-dc-power``). The
ingest writes each run's stated scope (``runs.power_scope``) and each result's
(``scores.power_scope``: its logs', else its names', else ``unstated``; empty for a result
without power logs), and says where the two disagree.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from gpuscale.quantities import joined

if TYPE_CHECKING:
    import pandas as pd

SCOPES = ("AC", "DC")
UNSTATED = "unstated"  # power logs that state no scope, beside names that declare none
_SCOPE = re.compile(r"(?:^|[-_ ./])(AC|DC)(?:$|[-_ ./])", re.IGNORECASE)


def stated_scope(scopes: Iterable[str]) -> str:
    """One scope of the scopes some logs state (``AC``, ``DC``; "" for none stated), both
    joined (``AC/DC``) where they disagree."""
    found = sorted({str(s) for s in scopes if s})
    return "/".join(found)


def named_scope(org: str, system_id: str, system_name: str) -> str:
    """The scope a result's folder, system id or system name declares (``AC``, ``DC``),
    else :data:`UNSTATED`."""
    found = _SCOPE.search(f"{org}/{system_id}/{system_name}")
    return found.group(1).upper() if found else UNSTATED


def power_scope(scores: pd.DataFrame) -> pd.Series:
    """Each result's power scope: its ``power_scope`` cell where the table has one
    filled, else as its names declare it (:func:`named_scope`): tables written before the
    column, or built by hand, get the names' word."""
    import pandas as pd  # lazy: the tables package loads without pandas

    names = [
        named_scope(str(o), str(s), str(n))
        for o, s, n in zip(scores["org"], scores["system_id"], scores["system_name"], strict=True)
    ]
    by_names = pd.Series(names, index=scores.index, dtype=object)
    if "power_scope" not in scores:
        return by_names.astype(str)
    given = scores["power_scope"].astype(object)
    cell = given.where(given.notna(), "").astype(str)
    return cell.where(cell != "", by_names).astype(str)


def scope_disagreement(logs: str, names: str) -> str:
    """Why a result's power scope may be in doubt: its logs state both scopes, or one its
    names contradict; "" where neither."""
    if "/" in logs:
        return (
            f"its power logs state both {joined(logs.split('/'))} (conversion_eff's "
            "measurement_type): its power scope is not known"
        )
    if logs and names != UNSTATED and names != logs:
        return (
            f"its power logs state {logs} (conversion_eff's measurement_type) where its names "
            f"say {names}: its power scope is the logs' {logs}"
        )
    return ""
