"""How gpuscale writes a number for people (report tables, tooltips, findings, the CLI's
tables): never in exponent notation, which readers stumble on."""

from __future__ import annotations

import numbers


def number(value: object, digits: int = 3) -> str:
    """``digits`` significant digits below ``10**digits`` (0.176, 32.8, 222, 0.0000123),
    whole numbers with thousands separators from there (3,070, not 3.07e+03); integers
    in full (2,528); None and NaN as ""; True as "yes", False as ""; anything else as
    ``str``. Only magnitudes below 1e-6 keep an exponent (a row of zeros says less).
    numpy scalars count as the Python numbers they stand for."""
    if value is None or isinstance(value, str):
        return value or ""
    import numpy as np  # here, not at the top: the CLI starts without numpy

    if isinstance(value, bool | np.bool_):
        return "yes" if value else ""
    if isinstance(value, numbers.Integral):
        return f"{int(value):,}"
    if not isinstance(value, numbers.Real):
        return str(value)
    value = float(value)
    if value != value:
        return ""
    if value in (float("inf"), float("-inf")):
        return str(value)
    if value != 0 and abs(value) < 1e-6:
        return f"{value:.{digits}g}"
    # Rounded first: 999.96 is "1,000", never "1e+03".
    text = np.format_float_positional(value, precision=digits, fractional=False, trim="-")
    rounded = float(text)
    if abs(rounded) >= 10**digits:
        return f"{rounded:,.0f}"
    if abs(rounded) >= 1000:  # 1,843 beside 12,130, never 1843
        whole, _, fraction = text.partition(".")
        return f"{int(whole):,}" + (f".{fraction}" if fraction else "")
    return text


def devices(count: float, family: str) -> str:
    """``3,472 x H100-SXM5-80GB``: a device count (thousands separated) and its kind
    (a vendor word written twice, ``NVIDIA NVIDIA H200``, once)."""
    return f"{number(int(count))} x {named(family)}"


def named(*parts: object) -> str:
    """Names joined by spaces without a word written twice where they meet or inside
    one (``named("NVIDIA", "NVIDIA DGX H200")`` is ``NVIDIA DGX H200``; ``NVIDIA NVIDIA
    H200`` becomes ``NVIDIA H200``); the comparison ignores case."""
    import re

    words: list[str] = []
    for part in parts:
        for word in re.split(r"\s+", str(part).strip()):
            if word and not (words and words[-1].lower() == word.lower()):
                words.append(word)
    return " ".join(words)


# Letters whose spoken name starts with a vowel sound: "an H100", "an RTX 4090", "an L4".
_VOWEL_SOUND_LETTERS = frozenset("AEFHILMNORSX")


def article(word: str) -> str:
    """``a`` or ``an`` for ``word`` as it is said: initialisms and model numbers letter by
    letter (an H100, an RTX 4090, an MI300X, a TPU-v5p, a B200), other words by their
    first letter (a Gaudi2, an accelerator)."""
    text = word.strip()
    if not text:
        return "a"
    spelled = len(text) == 1 or not text[1].islower()  # "RTX", "H100", "A30"; not "Gaudi2"
    if spelled and text[0].isupper():
        return "an" if text[0] in _VOWEL_SOUND_LETTERS else "a"
    return "an" if text[0].lower() in "aeio" else "a"
