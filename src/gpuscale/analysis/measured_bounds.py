"""Bounds measured on the bundled rounds and stored as data (``data/*.json``, each written
by the benchmark its ``command`` field names), read as records: the spread of times at one
count beyond which a system is an outlier (``outliers.CountSpread``), the spread of
samples to converge beyond which two results are not pooled
(``score_intervals.ConvergenceSpread``)."""

from __future__ import annotations

import json
import math
from importlib import resources
from typing import TypeVar

Bound = TypeVar("Bound")


class LogRatioBound:
    """A bound stored as a natural log of a ratio (``log_ratio``)."""

    __slots__ = ()
    log_ratio: float

    @property
    def ratio(self) -> float:
        """The bound as a factor (``exp(log_ratio)``)."""
        return math.exp(self.log_ratio)


def read_bound(kind: type[Bound], file_name: str) -> Bound:
    """``kind`` built from the bundled ``data/<file_name>`` (its ``rounds`` list as a tuple)."""
    text = (resources.files("gpuscale") / "data" / file_name).read_text(encoding="utf-8")
    stored = json.loads(text)
    return kind(**stored | {"rounds": tuple(stored["rounds"])})
