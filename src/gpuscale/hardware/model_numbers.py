"""Device names matched on whole model numbers: a catalogue pattern's number never
matches inside a longer one (``a100`` not in ``a1000``, an RTX A1000; ``h100`` not in
``h1000``), while the names torch and vendors write (``NVIDIA A100-SXM4-80GB``, ``NVIDIA
H100 80GB HBM3``, ``H100SXM``) still match. One rule for every table of the catalogue
(``accelerators``, ``peaks``, ``power``)."""

from __future__ import annotations

import re
from collections.abc import Callable

# a run of digits in a pattern (not after a backslash: ``\d`` is no number), which a
# digit may not follow in the name
_NUMBER = re.compile(r"(?<!\\)(\d+)(?![\d{])")


def whole_numbers(pattern: str) -> str:
    """``pattern`` with every model number in it made whole: ``h100.*nvl`` ->
    ``h100(?!\\d).*nvl``."""
    return _NUMBER.sub(r"\1(?!\\d)", pattern)


def matcher(pattern: str) -> Callable[[str], re.Match[str] | None]:
    """The search of ``pattern`` (on a lower-cased name) with whole model numbers."""
    return re.compile(whole_numbers(pattern)).search
