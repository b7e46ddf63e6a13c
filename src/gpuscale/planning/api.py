"""``gpuscale.planning``: time to train on N devices of an accelerator, from MLPerf.

Returns the plan table (``gpuscale.tables.plan.PLAN_SCHEMA``, one row per accelerator count)
with ``attrs["notes"]`` (the sentences: which systems, which class each count is in, why
throughput per device moves, why an interval is wide), ``attrs["model"]`` (the fitted
model's facts) and ``attrs["cost_unit"]`` (the cost column's unit). Prints nothing; bad
input raises ``ValueError`` (``UnknownNameError``, ``PlanError``) with a message for people.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pandas as pd

from gpuscale.planning.request import PlanRequest
from gpuscale.planning.result import PlanError, PlanResult, plan_for, resolve_family
from gpuscale.planning.terminal import cost_unit
from gpuscale.tables import frame_of
from gpuscale.tables.plan import PLAN_SCHEMA
from gpuscale.tables.requests import check_keywords, keyword_doc, keyword_signature


def as_frame(result: PlanResult) -> pd.DataFrame:
    """The plan table of a :class:`PlanResult` with what ``gpuscale plan -f json`` carries
    beside its rows (``attrs``: ``notes``, ``model`` and ``cost_unit``, the cost column's
    unit, None where no row has a cost)."""
    table = frame_of(PLAN_SCHEMA, result.rows)
    table.attrs["notes"] = list(result.notes)
    table.attrs["model"] = dict(result.model)
    table.attrs["cost_unit"] = cost_unit(result.rows, "price_per_device_hour=")
    return table


def plan(
    request: PlanRequest | None = None,
    *,
    scores: pd.DataFrame | None = None,
    **fields: Any,
) -> pd.DataFrame:
    """The plan table for ``request`` with the keywords after ``scores`` (its fields)
    replaced, or for a request built from them, on ``scores`` (default: the bundled
    rounds)."""
    for data in ("round", "offline", "path"):  # the CLI's data options: here, scores=
        if data in fields:
            raise TypeError(
                f"plan() has no keyword {data!r}: the data to plan from is scores=, e.g. "
                "plan(..., scores=gpuscale.load_round('v5.0').scores) (a round's results "
                "folder or archive: gpuscale.read_round(PATH).scores)"
            )
    check_keywords(PlanRequest, fields, "plan", "scores")
    if request is not None and not isinstance(request, PlanRequest):
        raise TypeError(
            f"plan takes a PlanRequest or its fields as keywords, not {request!r}: "
            "plan(workload='bert', accelerator='H100', devices=[8, 64])"
        )
    request = PlanRequest(**fields) if request is None else replace(request, **fields)
    return as_frame(plan_for(request, scores))


# help(gpuscale.plan) lists the request's fields, each a keyword with its default
# help() says what each keyword means, from the request's fields (their options' help)
plan.__doc__ = keyword_doc(plan, PlanRequest)
plan.__signature__ = keyword_signature(plan, PlanRequest)  # type: ignore[attr-defined]


__all__ = ["PlanError", "PlanRequest", "as_frame", "plan", "plan_for", "resolve_family"]
