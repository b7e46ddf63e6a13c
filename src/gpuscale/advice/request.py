"""One advice request: what the user asked (``advice.request_fields``), checked as it is
made. The CLI's ``advise`` options are generated from its fields, ``gpuscale.advise``
takes one, and the report reads it back."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gpuscale.advice.conflicts import check_options
from gpuscale.advice.request_fields import RequestFields
from gpuscale.advice.request_numbers import check_numbers


@dataclass(frozen=True, kw_only=True, slots=True)
class AdviceRequest(RequestFields):
    """:class:`RequestFields`, each number in its range (``advice.request_numbers``) and
    the options agreeing (``advice.conflicts``)."""

    def __post_init__(self) -> None:
        for name in ("step_ms", "batch"):  # given several times: a tuple; once: the value
            value = getattr(self, name)
            if isinstance(value, list | tuple):
                object.__setattr__(self, name, tuple(value) if len(value) > 1 else value[0])
        check_numbers(self)
        check_options(self)

    @classmethod
    def of(cls, request: AdviceRequest | None = None, **keywords: object) -> AdviceRequest:
        if request is None:
            return cls(**keywords)
        return cls(**(asdict(request) | keywords))
