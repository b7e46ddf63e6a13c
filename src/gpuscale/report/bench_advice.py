"""The advice the report's "your hardware" section shows, computed before it is drawn:
``gpuscale advise --bench`` on the report's bench table (the section itself is given the
result and calls nothing of the advice)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from gpuscale.advice.api import Advice, advise_loaded
from gpuscale.advice.request import AdviceRequest
from gpuscale.tables.requests import FieldError


@dataclass(frozen=True, slots=True)
class BenchAdvice:
    """The advice asked for, or why it was not given (what ``gpuscale advise --bench``
    says); ``allow_flagged``: it was asked to use flagged runs."""

    advice: Advice | None
    refused: str | None = None
    allow_flagged: bool = False


def advice_on_bench(bench: pd.DataFrame, request: AdviceRequest) -> BenchAdvice:
    """The advice of ``request`` on the bench table (files the request names besides the
    bench results, a collectives sweep or a saved topology, read first)."""
    try:
        advice = advise_loaded(request, bench=bench)
    except FieldError as exc:  # a field refused: named by its option, as the command says it
        return BenchAdvice(None, exc.as_options(), request.allow_flagged)
    except ValueError as exc:  # CalibrationError among them: said, as the command says it
        return BenchAdvice(None, str(exc), request.allow_flagged)
    return BenchAdvice(advice, None, request.allow_flagged)
