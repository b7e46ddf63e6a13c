"""A template over a record's values, written without arithmetic: ``{name}`` as it is,
``{name:spec}`` with a Python format spec, or with one of the advice's own ways to write
a number (``quantities``):

* ``ms`` (``format_ms``), ``ms~other`` (in the unit ``other``'s value takes), ``count``
  (``format_count``), ``num`` (``number``), ``apart~other`` (``fixed_apart``: to the
  digits that tell it from ``other``), ``above~other`` (``numbers_apart``:
  the value to the digits that tell it above ``other``), ``beside~other`` (the value as
  printed beside ``other`` so written), ``batches``
  (numbers joined by ``, ``), ``pairs`` (the first of each pair, ``:g``, by ``, ``);
* ``pick`` (the fragment of the template keyed by the value), ``opt`` (the fragment of
  the template named like the value, where the value is not None; else nothing).
"""

from __future__ import annotations

from string import Formatter

from gpuscale.advice.types import Value
from gpuscale.quantities import fixed_apart, format_count, format_ms, number, numbers_apart


def _float(value: object) -> float:
    if not isinstance(value, int | float):
        raise TypeError(f"{value!r} is not a number")
    return float(value)


class Phrasing(Formatter):
    """The fragments of one template (``text`` and those it names) over ``values``."""

    def __init__(self, template: dict, values: dict[str, Value]) -> None:
        self.template = template
        self.values = values

    def said(self, key: str) -> str:
        return self.format(self.template[key], **self.values)

    def format_field(self, value: object, format_spec: str) -> str:
        kind, _, other = format_spec.partition("~")
        of = self.values.get(other) if other else None
        if kind == "ms":
            return format_ms(_float(value), None if of is None else _float(of))
        if kind == "count":
            return format_count(_float(value))
        if kind == "num":
            return number(value)
        if kind == "apart":
            return fixed_apart(_float(value), _float(of))
        if kind == "above":
            return numbers_apart(_float(value), _float(of))[0]
        if kind == "beside":
            return numbers_apart(_float(of), _float(value))[1]
        if kind == "batches":
            return ", ".join(f"{b:g}" for b in value)  # type: ignore[attr-defined]
        if kind == "pick":
            return self.format(self.template[other][str(value)], **self.values)
        if kind == "opt":
            return "" if value is None else self.format(self.template[other], **self.values)
        return super().format_field(value, format_spec)
