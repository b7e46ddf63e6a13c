"""How the report writes a number: never in exponent notation, which readers stumble on."""

from __future__ import annotations

import numpy as np


def number(value: object, digits: int = 3) -> str:
    """``digits`` significant digits below ``10**digits`` (0.176, 32.8, 222, 0.0000123),
    whole numbers with thousands separators from there (3,070, not 3.07e+03); ints in
    full (2,528); None and NaN as ""; True as "yes", False as ""; anything else as
    ``str``. Only magnitudes below 1e-6 keep an exponent (a row of zeros says less)."""
    if value is None or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, int):
        return f"{value:,}"
    if not isinstance(value, float):
        return str(value)
    if value != 0 and abs(value) < 1e-6:
        return f"{value:.{digits}g}"
    # Rounded first: 999.96 is "1,000", never "1e+03".
    text = np.format_float_positional(value, precision=digits, fractional=False, trim="-")
    return f"{float(text):,.0f}" if abs(float(text)) >= 10**digits else text
