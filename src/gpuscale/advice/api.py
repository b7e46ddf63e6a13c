"""The advice for one model: ``advise(request, bench=, topology=, collectives=)``.

Strictly typed: the request says what was asked, the other arguments are what was
measured, already read (``advice.load.load_advice_data`` reads the files a request names;
the CLI and the report call it first). Two calls in a row: the calibration, built once
(``calibrate.build``: the link, the model from bench rows or from numbers, the
convergence model, the inputs at the ends of every assumed range), then the search, once
(``search.recommend.search``: predictions, the decision and its readings at those ends,
what qualifies it). ``gpuscale.advise(...)`` (``advice/load.py``) is the same call by keywords for
Python users, reading the files itself.

Returns an :class:`~gpuscale.advice.search.recommend.Advice`: the recommendation, a DataFrame of
predictions per accelerator count (``.predictions``, schema ``tables.advice``) and the
explanation.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from gpuscale.advice.calibrate.build import build
from gpuscale.advice.conflicts import check_with_data
from gpuscale.advice.model.network import MeasuredCurves
from gpuscale.advice.request import ONE_BATCH_WITH_BENCH, AdviceRequest
from gpuscale.advice.search.recommend import Advice, search
from gpuscale.interconnect.topology import Topology
from gpuscale.tables.requests import NamedError, ref


def advise(
    request: AdviceRequest,
    *,
    bench: pd.DataFrame | None = None,
    topology: Topology | None = None,
    collectives: MeasuredCurves | None = None,
    notes: Sequence[str] = (),
) -> Advice:
    """The advice for ``request``: from ``bench`` (a bench table) when given, else from
    the request's numbers. ``topology`` chooses the link when none is given and caps the
    device count; ``collectives``: measured curves; ``notes``: sentences on reading them
    (lines skipped), said among the sources. Flagged bench runs are left out unless
    ``request.allow_flagged``. Raises ``ValueError`` (and its subclass
    ``CalibrationError``, which lists the flags when flagged runs were left out) with a
    message for the user."""
    _check_given(request, bench)
    calibrated = build(
        request, bench=bench, topology=topology, collectives=collectives, notes=notes
    )
    return search(calibrated, request)


def _check_given(request: AdviceRequest, bench: pd.DataFrame | None) -> None:
    """Something to advise from: a bench table, or the model's numbers."""
    if not isinstance(request, AdviceRequest):
        raise TypeError(f"request must be an AdviceRequest, not {request!r}")
    if bench is not None and not isinstance(bench, pd.DataFrame):
        raise TypeError(f"bench must be a bench table (read it with advice.load), not {bench!r}")
    if bench is None and (request.params is None or request.step_ms is None):
        raise NamedError(
            f"nothing to advise from: give bench results (a file as {ref('bench')}), or the "
            f"model's parameters and step time ({ref('params')} and {ref('step_ms')})"
        )
    if bench is not None and isinstance(request.batch, tuple):
        raise NamedError(ONE_BATCH_WITH_BENCH)
    check_with_data(request, bench=bench is not None)  # options for the other kind
