"""The sizes people type, read: parameter counts and FLOPs (decimal: ``7M``, ``1.5B``,
``2e16``), byte sizes (binary as nccl-tests reads them: ``64M`` is 64 MiB; ``64MB`` is
SI) and an option's number; text that is none is a :class:`BadQuantity` naming what it
must be. Whether a value read from JSON or passed to a function is a number at all (a
``bool`` is not) is :func:`number_or_none`. How gpuscale writes quantities is
``gpuscale.quantities``.

No heavy imports: the CLI parses sizes before deciding whether torch is needed.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Literal, overload

_COUNT_UNITS = {"": 1, "k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12, "p": 1e15}
# nccl-tests reads K, M, G as powers of two; KiB/MiB/GiB say so explicitly; KB/MB/GB
# (with the B) are the SI powers of ten.
_BYTE_UNITS = {
    "": 1,
    "b": 1,
    "k": 2**10,
    "m": 2**20,
    "g": 2**30,
    "t": 2**40,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}


# The sizes offered as examples where text is none, each as typed with its value: those
# within the field's own range are offered (``Examples.said``).
_SIZE_EXAMPLES = (("250k", 2.5e5), ("7M", 7e6), ("1.5B", 1.5e9), ("2T", 2e12), ("20P", 2e16))
_BYTE_EXAMPLES = (
    ("8", 8),
    ("64K", 2**16),
    ("64M", 2**26),
    ("1G", 2**30),
    ("1GiB", 2**30),
    ("1GB", 10**9),
)


def e_notation(value: float) -> str:
    """``2e16``, ``1.5e9``: a number as one types it in exponent form (no ``+``, no zeros)."""
    mantissa, exponent = f"{value:e}".split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


class Examples:
    """The values a refusal offers, ``use e.g. 250k, 7M, 1.5B``: each as typed with its
    value, the last kept said again in exponent form where ``exponent`` (``or 2e16``).
    Those within a field's range are offered (lowest, highest, lowest excluded?); none
    within it: its highest, the most the field takes."""

    def __init__(self, typed: tuple[tuple[str, float], ...], *, exponent: bool) -> None:
        self.typed, self.exponent = typed, exponent

    def _kept(self, low: float, high: float, open_low: bool) -> list[tuple[str, float]]:
        kept = [(t, v) for t, v in self.typed if (v > low if open_low else v >= low) and v <= high]
        return kept or [(e_notation(high), high)]

    def one(self, low: float, high: float, open_low: bool = False) -> tuple[str, str]:
        """One example within the range, as typed and in exponent form (``7M``, ``7e6``):
        the second within it, else the first."""
        kept = self._kept(low, high, open_low)
        typed, value = kept[min(1, len(kept) - 1)]
        return typed, e_notation(value)

    def said(self, low: float = -math.inf, high: float = math.inf, open_low: bool = False) -> str:
        """``(use e.g. 250k, 7M, 1.5B, 2T, 20P or 2e16)``, the examples within the range."""
        kept = self._kept(low, high, open_low)
        typed, e = [t for t, _ in kept], e_notation(kept[-1][1])
        if self.exponent and typed[-1] != e:
            return f"(use e.g. {', '.join(typed)} or {e})"
        return f"(use e.g. {', '.join(typed)})"


SIZES = Examples(_SIZE_EXAMPLES, exponent=True)
BYTES = Examples(_BYTE_EXAMPLES, exponent=False)


_MOST_BYTES = 2**50  # 1 PiB, excluded: past it a typo


class BadQuantity(ValueError):
    """Text that is no quantity of the kind asked: ``text`` and ``rule`` (what it must
    be), read ``not a size: '-5' (use e.g. 250k, 7M, 1.5B)``; ``examples``, where the rule
    offers some, to offer those within a field's own range instead (:meth:`within`)."""

    def __init__(self, text: str, rule: str, examples: Examples | None = None) -> None:
        self.text, self.rule, self.examples = text, rule, examples
        head, paren, hint = rule.partition(" (")  # the text refused before the hint
        super().__init__(f"{head}: {text!r}{paren}{hint}")

    def within(self, low: float, high: float, open_low: bool = False) -> BadQuantity:
        """This refusal offering only examples from ``low`` to ``high`` (a field's range)."""
        if self.examples is None:
            return self
        head = self.rule.partition(" (")[0]
        said = self.examples.said(low, high, open_low)
        return BadQuantity(self.text, f"{head} {said}", self.examples)


# What a number of each kind must be, said in its refusal.
_RULES = {int: "must be a whole number", float: "must be a number"}
# A number with a unit written after it (``20ms``, ``300 W``): the option's name gives its unit
_UNIT_AFTER = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*[A-Za-z%/]+\s*")


def reading_number(kind: type) -> Callable[[object], object]:
    """A reader of an option's text as a number of ``kind``, ``int`` or ``float`` (``int``:
    ``1e3`` is a whole number; ``inf``, ``1e400`` and ``nan`` are numbers of either kind,
    returned as floats for the caller's ranges to refuse, as they refuse ``0``); text that
    is no number of that kind is a :class:`BadQuantity`; a number is returned as it is."""
    rule = _RULES[kind]

    def read(text: object) -> object:
        if not isinstance(text, str):  # a default, already a number
            return text
        try:
            return kind(text.strip())
        except ValueError:
            pass
        try:
            value = float(text)
        except ValueError:
            unit = _UNIT_AFTER.fullmatch(text)
            hint = f" (give {unit.group(1)}, a bare number)" if unit else ""
            raise BadQuantity(text, rule + hint) from None
        if not math.isfinite(value):
            return value
        if kind is int and not value.is_integer():
            raise BadQuantity(text, rule)
        return kind(value)

    return read


def read_size(text: str) -> int | float:
    """A count (parameters, FLOPs, samples) as typed: ``2M`` -> 2,000,000, ``250k`` ->
    250,000, ``1.5B`` -> 1,500,000,000, ``20P`` -> 2 x 10^16, ``2e16`` (decimal; ``params``
    may follow), whole (``int``) where finite; any number, ``0``, ``-1``, ``1e400`` (inf)
    and ``nan`` too, for the field's own range to refuse in its own words (a request's
    ranges: ``--samples 0`` and ``--samples 1e20`` are told one range). ``ValueError``
    (:class:`BadQuantity`) where the text is no number."""
    try:
        value = float(text)  # a plain number, whatever its value
    except ValueError:
        match = re.fullmatch(
            r"\s*([-+]?[0-9]*\.?[0-9]+(?:e[-+]?[0-9]+)?)\s*([kmbgtp]?)\s*(?:params)?\s*",
            text.lower(),
        )
        if not match:
            raise BadQuantity(text, f"not a size {SIZES.said()}", SIZES) from None
        value = float(match.group(1)) * _COUNT_UNITS[match.group(2)]
    return int(value) if math.isfinite(value) else value


def parse_size(text: str) -> int:
    """A count as :func:`read_size` reads it, above 0 and below 10^30 (past it a typo, and
    no whole number a count could take): for a size with no range of its own (a bench's
    bounds on the models' parameters; a request's fields read :func:`read_size` and check
    their own ranges). ``ValueError`` otherwise."""
    value = read_size(text)
    if not 0 < value < 1e30:
        raise BadQuantity(text, "a size must be above 0 and below 10^30")
    return int(value)


def parse_bytes(text: str) -> int:
    """A byte size as nccl-tests reads it: ``64M`` and ``64MiB`` are 64 x 2^20 bytes,
    ``1G`` and ``1GiB`` 2^30; ``64MB`` and ``1GB`` are SI (64 x 10^6, 10^9). A plain
    number is bytes. ``ValueError`` if not a size."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([a-z]*)\s*", text.lower())
    if not match or match.group(2) not in _BYTE_UNITS:
        raise BadQuantity(text, f"not a byte size {BYTES.said(1, _MOST_BYTES)}", BYTES)
    value = float(match.group(1)) * _BYTE_UNITS[match.group(2)]
    if not 1 <= value < _MOST_BYTES:
        raise BadQuantity(text, "a byte size must be at least 1 B and below 1 PiB")
    return int(value)


@overload
def number_or_none(value: object, *, whole: Literal[True]) -> int | None: ...
@overload
def number_or_none(value: object, *, whole: bool = False) -> int | float | None: ...
def number_or_none(value: object, *, whole: bool = False) -> int | float | None:
    """``value`` where it is an ``int`` or ``float`` (``whole``: an ``int``), else None.
    A ``bool`` is no number, though Python's ``bool`` is an ``int``: JSON's ``true``, or
    ``workers=True`` passed for a count, is refused rather than read as 1."""
    kinds = int if whole else (int, float)
    return value if isinstance(value, kinds) and not isinstance(value, bool) else None
