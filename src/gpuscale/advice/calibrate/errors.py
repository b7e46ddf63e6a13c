"""The errors that refuse a bench's rows for an advice: records (why, the runs left out),
their words given by the caller that shows them (``api.worded_refusal``)."""

from __future__ import annotations

from gpuscale.advice.types import Finding, LeftOut, Refusal
from gpuscale.tables.requests import FieldError, NamedError, as_keywords

Why = Finding | Refusal | str


class CalibrationError(ValueError):
    """The measurements cannot calibrate the model: why (``found``), the runs ``left`` out;
    its words (``text``) given by the caller that shows it (``api.worded``), else it reads
    as its record."""

    def __init__(self, found: Why, left: LeftOut | None = None) -> None:
        ValueError.__init__(self, found)
        self.found, self.left = found, left
        self.text = ""

    @property
    def rule(self) -> str:  # the refusal as a named field's rule (NamedError, FieldError)
        return self.text

    def __str__(self) -> str:
        return self.text or ValueError.__str__(self)


class NamedCalibrationError(CalibrationError, NamedError):
    """A :class:`CalibrationError` naming request fields (options, or Python's keywords)."""

    field, value, problems = "", None, ()

    def __str__(self) -> str:
        return as_keywords(CalibrationError.__str__(self))


class BenchFieldError(CalibrationError, FieldError):
    """A request's field the bench file refuses (a model it does not hold, a fixed cost
    above its step), named as the CLI's option or Python's keyword (``field_text``: its
    words naming the field, given with ``text``)."""

    def __init__(self, field: str, value: object, found: Why) -> None:
        CalibrationError.__init__(self, found)
        self.field, self.value = field, value
        self.field_text = ""

    @property
    def problems(self) -> tuple[tuple[str, object, str], ...]:
        return ((self.field, self.value, self.rule),)

    def __str__(self) -> str:
        return as_keywords(self.field_text or ValueError.__str__(self))
