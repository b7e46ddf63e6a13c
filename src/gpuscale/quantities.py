"""Quantities for people: how gpuscale writes a number (report tables, tooltips, findings,
the CLI's tables; never in exponent notation, which readers stumble on). How it reads
the sizes people type (parameter counts, decimal; byte sizes, binary as nccl-tests) is
``gpuscale.sizes``, re-exported here.

No heavy imports: the CLI parses sizes before deciding whether torch is needed.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable
from decimal import Decimal

# reading what people type lives in gpuscale.sizes; imported from here as before
from gpuscale.sizes import BadQuantity, parse_bytes, parse_size, read_size, reading_number

__all__ = [
    "UNPRINTABLE",
    "BadQuantity",
    "DurationUnit",
    "agreeing",
    "article",
    "column_label",
    "counted",
    "decimals_apart",
    "devices",
    "duration_unit",
    "ends_alike",
    "factor_interval",
    "filled",
    "fixed_apart",
    "format_bytes",
    "format_count",
    "format_hours",
    "format_minutes",
    "format_ms",
    "format_ms_span",
    "joined",
    "named",
    "noun_for",
    "number",
    "number_range",
    "numbers_apart",
    "of_the",
    "parse_bytes",
    "parse_size",
    "plural",
    "printable",
    "read_size",
    "reading_number",
    "span",
]


_YES = {True: "yes", False: ""}  # a flag in a table: said where set, else empty


TABLE_DIGITS = 4  # the significant figures of a terminal table's numbers (zeros kept)


def share_text(value: object, spec: str) -> str:
    """``value`` by the share format ``spec`` (``.0%``, ``+.0%``), a share that is not 0
    never written as one: below the spec's last place it gets the places of its first
    figure (``.0%`` of 0.0026: 0.3%, not 0%), as a table and a sentence both write it;
    nor a change above -100% as -100% (all of it gone): ``+.0%`` of -0.997 is -99.7%."""
    text = format(value, spec)
    if not isinstance(value, numbers.Real):
        return text
    if value and not any(c in "123456789" for c in text):
        places = max(0, -math.floor(math.log10(abs(float(value)) * 100)))
        return format(value, f"{spec.partition('.')[0]}.{places}%")  # its sign kept
    if -1 < value < 0 and text.endswith("%") and float(text[:-1]) == -100:
        places = max(1, -math.floor(math.log10((1 + float(value)) * 100)))
        return format(value, f"{spec.partition('.')[0]}.{places}%")
    return text


def number(value: object, digits: int = 3, *, zeros: bool = False, measure: bool = False) -> str:
    """``digits`` significant digits below ``10**digits`` (0.176, 32.8, 222, 0.0000123),
    whole numbers with thousands separators from there (3,070, not 3.07e+03); integers
    in full (2,528), and whole floats too (199946.0 is 199,946: a count beside a NaN);
    None, NaN and pandas' NA as ""; True as "yes", False as ""; anything else as
    ``str``. Only magnitudes below 1e-6 keep an exponent (a row of zeros says less).
    numpy scalars count as the Python numbers they stand for. ``zeros``: the trailing zeros
    of the ``digits`` kept (3.360 beside 0.3928 and 30.63, as a table's column shows them:
    each number to the same significant figures; 3.36 said fewer). ``measure``: a whole
    float below ``10**digits`` other than 0 is a measure, not a count (2.000 beside 3.500
    in a column of fractions)."""
    if value is None or isinstance(value, str):
        return value or ""
    if type(value).__name__ in ("NAType", "NaTType"):  # pandas' missing (an Int64 count)
        return ""
    # numpy's booleans by their dtype: numpy itself stays off the CLI's start (~0.17 s)
    if isinstance(value, bool) or getattr(getattr(value, "dtype", None), "kind", "") == "b":
        return _YES[bool(value)]
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
    if value.is_integer() and abs(value) < 2**53 and not (measure and 0 < abs(value) < 10**digits):
        # a count that went through a float column (NaN beside it) is written in full
        return f"{int(value):,}"
    # Rounded first: 999.96 is "1,000", never "1e+03"; Decimal writes it positionally
    text = format(Decimal(format(value, f"{'#' if zeros else ''}.{digits}g").rstrip(".")), "f")
    rounded = float(text)
    if abs(rounded) >= 10**digits:
        return f"{rounded:,.0f}"
    if abs(rounded) >= 1000:  # 1,843 beside 12,130, never 1843
        whole, _, fraction = text.partition(".")
        return f"{int(whole):,}" + filled(".{}", fraction)
    return text


# A column name's unit suffix as SI writes the unit (``energy_kj``: "energy kJ")
UNIT_LABELS = {
    "j": "J",
    "kj": "kJ",
    "kwh": "kWh",
    "w": "W",
    "mb": "MB",
    "gb": "GB",
    "gib": "GiB",
    "gbs": "GB/s",
}

# The words that make a column a measure, not a count (``quantities.measure_column``): a
# time, energy, power or rate unit after its first word (``min_devices`` is a count), or a
# ratio of two measures anywhere in its name (``prime``: E', ``e_prime``). A setting given
# in MiB (``bucket_mb``) or a count (``global_batch``) is neither.
MEASURE_UNITS = frozenset({"ms", "s", "min", "hours", "j", "kj", "kwh", "w", "gbs"})
RATIO_WORDS = frozenset({"speedup", "efficiency", "factor", "share", "prime"})

# Columns whose ``_mb`` suffix, as PyTorch spells it, counts MiB (2**20 bytes): DDP's
# ``bucket_cap_mb``; a table writes the unit meant.
MIB_COLUMNS = frozenset({"bucket_mb"})


def column_label(column: str) -> str:
    """A column's name as a table heads it: words at the underscores, each unit after its
    first word as SI writes it (``energy_per_sample_j``: "energy per sample J"; ``busbw_gbs``:
    "busbw GB/s"; ``power_w_mean``: "power W mean"); ``min``, ``ms`` and ``s`` are SI's
    already; ``bucket_mb``: "bucket MiB" (:data:`MIB_COLUMNS`)."""
    first, *rest = column.split("_")
    if column in MIB_COLUMNS:
        return " ".join([first, *rest[:-1], "MiB"])
    return " ".join([first, *(UNIT_LABELS.get(w, w) for w in rest)])


def measure_column(column: str) -> bool:
    """Whether a column's name says it holds a measure (:data:`MEASURE_UNITS` after its
    first word, :data:`RATIO_WORDS` anywhere: ``step_ms``, ``power_w_mean``, ``speedup_low``,
    ``convergence_factor``, ``compute_share``):
    its whole floats are then written with their figures (1.000 beside 0.7828), where a
    column of counts through a float (``accelerators`` beside a NaN) writes 8."""
    first, *rest = column.lower().split("_")
    return not MEASURE_UNITS.isdisjoint(rest) or not RATIO_WORDS.isdisjoint([first, *rest])


def plural(noun: str) -> str:
    """``run`` -> ``runs``; ``process`` -> ``processes``, ``batch`` -> ``batches``,
    ``property`` -> ``properties`` (the last word of ``noun`` is the one that changes)."""
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return f"{noun}es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return f"{noun[:-1]}ies"
    return f"{noun}s"


def agreeing(count: float, one: str, many: str) -> str:
    """Of two words, the one that agrees with ``count``: ``one`` for 1, else ``many`` (a
    verb, ``does``/``do``; a pronoun, ``it``/``each``; a noun, ``a benchmark``/``benchmarks``)."""
    if count == 1:
        return one
    return many


def noun_for(count: int, noun: str) -> str:
    """``noun`` in the number ``count`` takes, without the count: ``field`` for 1,
    ``fields`` otherwise (a list's noun: ``unknown fields a and b``)."""
    return agreeing(count, noun, plural(noun))


def counted(count: int, noun: str) -> str:
    """``1 accelerator``, ``3,472 accelerators``, ``2 processes``: a count with its noun in
    the number it takes (never a parenthesised plural)."""
    return f"{number(count)} {noun_for(count, noun)}"


def of_the(part: int, whole: int, noun: str) -> str:
    """``1 of the 3 runs``; the whole said as such where ``part`` is all of it: ``the
    run``, ``both runs``, ``all 3 runs`` (never "1 of the 1 run"). Its verb agrees with
    ``part``: ``is`` where it is 1."""
    if part != whole:
        return f"{int(part):,} of the {counted(whole, noun)}"
    if whole == 1:
        return f"the {noun}"
    if whole == 2:
        return f"both {plural(noun)}"
    return f"all {counted(whole, noun)}"


def filled(template: str, value: object) -> str:
    """``template`` with ``value`` in its ``{}``, or ``""`` where there is no value (None,
    an empty text or list, 0): a clause said only where it has something to say
    (``filled(" ({})", basis)``, ``filled(", {} skipped", skipped)``)."""
    if not value:
        return ""
    return template.format(value)


def joined(items: Iterable[object], conjunction: str = "and") -> str:
    """Items as a sentence lists them: ``B200``, ``H100 and B200``, ``RTX A5000, RTX 4090
    and B200`` (commas, the last two joined by ``conjunction``: ``and``, ``or``)."""
    words = [str(item) for item in items]
    if len(words) < 3:
        return f" {conjunction} ".join(words)
    return f"{', '.join(words[:-1])} {conjunction} {words[-1]}"


def devices(count: float, family: str) -> str:
    """``3,472 x H100-SXM5-80GB``: a device count (thousands separated) and its kind
    (a vendor word written twice, ``NVIDIA NVIDIA H200``, once)."""
    return f"{number(int(count))} x {named(family)}"


def named(*parts: object) -> str:
    """Names joined by spaces without a word written twice where they meet or inside
    one (``named("NVIDIA", "NVIDIA DGX H200")`` is ``NVIDIA DGX H200``; ``NVIDIA NVIDIA
    H200`` becomes ``NVIDIA H200``); the comparison ignores case."""

    words: list[str] = []
    for part in parts:
        for word in re.split(r"\s+", str(part).strip()):
            if word and not (words and words[-1].lower() == word.lower()):
                words.append(word)
    return " ".join(words)


# Letters whose spoken name starts with a vowel sound: "an H100", "an RTX 4090", "an L4".
_VOWEL_SOUND_LETTERS = frozenset("AEFHILMNORSX")
_ARTICLES = {True: "an", False: "a"}  # by whether the word starts with a vowel sound


def article(word: str) -> str:
    """``a`` or ``an`` for ``word`` as it is said: initialisms and model numbers letter by
    letter (an H100, an RTX 4090, an MI300X, a TPU-v5p, a B200), other words by their
    first letter (a Gaudi2, an accelerator), numbers as they are read (an 8.03B, an 11M,
    an 18-layer, a 110M, a 1.3B)."""
    text = word.strip()
    if not text:
        return "a"
    if text[0].isdigit():  # "eight ...", "eleven ...", "eighteen ..." begin with a vowel
        leading = re.match(r"\d+", text).group()
        return _ARTICLES[leading.startswith("8") or leading in ("11", "18")]
    spelled = len(text) == 1 or not text[1].islower()  # "RTX", "H100", "A30"; not "Gaudi2"
    if spelled and text[0].isupper():
        return _ARTICLES[text[0] in _VOWEL_SOUND_LETTERS]
    return _ARTICLES[text[0].lower() in "aeio"]


def with_article(word: str) -> str:
    """``word`` after its article, as said: ``an 8.03B``, ``a 7B``, ``an H100``."""
    return f"{article(word)} {word}"


def format_bytes(size: float) -> str:
    """Bytes in binary units as nccl-tests prints them: ``1 GiB``, ``64 MiB``, ``8 B``."""
    for unit, factor in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= factor:
            value = size / factor
            return f"{value:.0f} {unit}" if value == int(value) else f"{number(value)} {unit}"
    return f"{size:.0f} B"


def format_count(value: float) -> str:
    """A count people read at a glance: ``7.2M``, ``1.5B``, ``350k``, ``12``."""
    for unit, factor in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= factor:
            return f"{number(value / factor)}{unit}"
    return f"{number(value)}"


def format_batch(value: float) -> str:
    """A batch, a count the user sets, exact with thousands separators: ``2,048``, ``32``
    (never rounded to ``2.05k``: the table beside it prints 2,048)."""
    return f"{round(value):,}"


# One unit for every duration of a kind in a sentence (or a section): the unit is chosen
# once, from the duration the sentence is about, and the others are written in it, never
# "7 s" beside "0.119 min". Times to train from MLPerf are always in minutes, the unit of
# the tables they sit beside (``time_to_train_min``, "Time (min)"); a sentence adds the
# hours or days of a long one in parentheses (:func:`format_minutes`).
DurationUnit = tuple[str, float]  # (name, hours per unit)


def duration_unit(hours: float) -> DurationUnit:
    """The unit that reads best for a duration: s under 90 s, min under 90 min, h under
    72 h, else d."""
    seconds = abs(hours) * 3600
    if seconds < 90:
        return ("s", 1 / 3600)
    if seconds < 5400:
        return ("min", 1 / 60)
    if abs(hours) < 72:
        return ("h", 1.0)
    return ("d", 24.0)


def format_hours(hours: float, unit: DurationUnit | None = None) -> str:
    """A duration in ``unit`` (:func:`duration_unit`), by default the one that reads best
    for it: ``42 s``, ``17 min``, ``3.2 h``, ``5.1 d``."""
    name, per = unit or duration_unit(hours)
    return f"{number(hours / per)} {name}"


# From these minutes, as written, a sentence's time to train also says hours, then days
HOURS_FROM_MIN = 120  # 2 h
DAYS_FROM_MIN = 2880  # 2 days
PICTURED_DIGITS = 2  # the hours' or days' significant figures: a picture, not the figure


def format_minutes(minutes: float, high: float | None = None, digits: int = 3) -> str:
    """A time to train in a sentence, in minutes whatever its size (``0.119 min``,
    ``5.39 min``), the unit of the tables beside it, to ``digits`` significant figures as
    :func:`number` writes them; with ``high``, an interval (``16,420-17,000 min``). Where
    the larger end, as written, is 120 min (2 h) or more, the hours follow in parentheses,
    and from 2,880 min (2 days) the days, each end to 2 significant figures by
    :func:`number` (one value where both read alike): ``134 min (2.2 h)``, ``2,879 min
    (48 h)``, ``62,500 min (43 days)``, ``416,700 min (290 days)``. The threshold is on
    the minutes as written, so a time reads the same wherever it is said (119.9 min is
    written ``120 min (2 h)``, as 120 is). Under 120 min, or infinite: the minutes alone;
    NaN at either end: ``" min"``, as :func:`number` writes NaN (nothing to say). Tables
    keep minutes in their column and ``-f json`` minutes as numbers; only sentences say
    this."""
    ends = [minutes] if high is None else [minutes, high]
    if any(m != m for m in ends):
        return " min"
    written = [number(m, digits) for m in ends]
    said = span(written[0], written[-1]) + " min"  # one value where both ends read alike
    if not all(math.isfinite(m) for m in ends):
        return said
    largest = max(float(w.replace(",", "")) for w in written)
    if largest < HOURS_FROM_MIN:
        return said
    name, per = ("days", 1440.0) if largest >= DAYS_FROM_MIN else ("h", 60.0)
    pictured = span(*(number(m / per, PICTURED_DIGITS) for m in (ends[0], ends[-1])))
    return f"{said} ({pictured} {name})"


def format_ms(ms: float, like: float | None = None) -> str:
    """Milliseconds, as seconds from 1,000 ms: ``0.42 ms``, ``38.1 ms``, ``3.88 s``; with
    ``like``, in the unit ``like`` takes (the parts of a step in the step's unit)."""
    seconds = abs(ms if like is None else like) >= 1e3
    return f"{number(ms / 1e3)} s" if seconds else f"{number(ms)} ms"


def format_ms_span(low: float, high: float) -> str:
    """A range of times with its unit once, in the unit its high end takes, each end to the
    other's decimals (``0.412-0.560 ms``, ``1.20-3.45 s``); a low end of 0 said as none
    (``none to 0.782 ms``: nothing at all is in the range); one value where both read alike."""
    if low == 0:
        return f"none to {format_ms(high)}"
    scale, unit = (1e3, "s") if abs(high) >= 1e3 else (1.0, "ms")
    return f"{span(*ends_alike(low / scale, high / scale))} {unit}"


def span(low: str, high: str, joiner: str = "-") -> str:
    """A range as written: ``1.3-1.6``, or one value where both ends read alike (never
    ``+35% to +35%``); ``joiner`` between them (``-``, `` to ``)."""
    return low if low == high else f"{low}{joiner}{high}"


def ends_alike(low: object, high: object, digits: int = 3) -> tuple[str, str]:
    """An interval's ends as :func:`number` writes them, each to ``digits`` significant
    figures with its trailing zeros (``0.157-0.190``, ``1.60-2.00``, not ``0.157-0.19``):
    an end reads as precise as the other; an integer as a count (``2-2,048``); "" for an end
    missing (None, NaN)."""

    def end(value: object) -> str:
        text = number(value, digits, zeros=True)
        if isinstance(value, numbers.Integral) or not text or text in ("inf", "-inf"):
            return text  # a count (2-2,048), none, or infinity: as written
        if any(mark in text for mark in ".e,"):
            return text  # its figures written, an exponent, or thousands
        whole = len(text.lstrip("-"))  # a whole float (2.0 is "2"): its zeros after the point
        return text if whole >= digits else f"{float(text):.{digits - whole}f}"

    return end(low), end(high)


def number_range(low: object, high: object, digits: int = 3) -> str:
    """An interval's ends as :func:`ends_alike` writes them to ``digits`` significant
    figures, ``1.21-1.43``, or to the decimals that tell them apart where those write two
    different ends alike (``33.97-34.02``, never ``34.0-34.0``, as the terminal's interval
    reads); "" where its low end is missing (None, NaN: no interval)."""
    low_said, high_said = ends_alike(low, high, digits)
    if not low_said:
        return ""
    reals = isinstance(low, numbers.Real) and isinstance(high, numbers.Real)
    if low_said == high_said and reals and low != high:
        low_said, high_said = numbers_apart(float(low), float(high))
    return f"{low_said}-{high_said}"


def factor_interval(width_log: float) -> str:
    """An interval multiplicative about its value (``exp(+/-width_log)``) as it reads:
    ``-26% to +35%``, and past a factor of 1.5 also the factor (``-74% to +284%, a factor
    of 3.84 either way``); never ``+/-284%`` (no step is 184% below nothing)."""
    factor = math.exp(width_log)
    text = span(f"-{1 - 1 / factor:.0%}", f"+{factor - 1:.0%}", " to ")
    return text + (f", a factor of {factor:.3g} either way" if factor >= 1.5 else "")


def decimals_apart(*values: float, decimals: int = 2, most: int = 6) -> int:
    """The fewest decimals (from ``decimals``, up to ``most``) at which the values read
    as different as they are: values that differ never print alike (``0.98 -> 0.70``,
    ``1.004 above 1``, not ``1.00 above 1``); values within a billionth read alike."""
    for k in range(decimals, most + 1):
        shown = [f"{v:.{k}f}" for v in values]
        if all(
            (shown[i] == shown[j]) == math.isclose(values[i], values[j], rel_tol=1e-9)
            for i in range(len(values))
            for j in range(i + 1, len(values))
        ):
            return k
    return most


def fixed_apart(value: float, *others: float, decimals: int = 2) -> str:
    """``value`` to the decimals (at least ``decimals``) that tell it from ``others``
    (:func:`decimals_apart`): a value said above 1 prints above 1."""
    return f"{value:.{decimals_apart(value, *others, decimals=decimals)}f}"


def numbers_apart(value: float, other: float) -> tuple[str, str]:
    """``value`` and ``other`` as :func:`number` writes them, or where that writes two
    different values alike, both to the decimals that tell them apart (a rate said above
    a peak prints above it: ``989.45`` above ``989.4``, never ``989`` above ``989``)."""
    a, b = number(value), number(other)
    if a != b or math.isclose(value, other, rel_tol=1e-9):
        return a, b
    k = decimals_apart(value, other, decimals=1)
    return f"{value:,.{k}f}", f"{other:,.{k}f}"


# Characters that act on a terminal or reorder text rather than show: C0 and C1 controls
# and DEL (ESC starts a terminal's escape sequences), and Unicode's bidirectional
# overrides and isolates (U+202A-U+202E, U+2066-U+2069: text that reads one way and is
# stored another).
UNPRINTABLE = "[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]"
_UNPRINTABLE = re.compile(UNPRINTABLE)
_UNPRINTABLE_BUT_LINES = re.compile(UNPRINTABLE.replace("\x00-\x1f", "\x00-\x08\x0b-\x1f"))


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, *, lines: bool = False) -> str:
    """``text`` with every control character written as its escape (``\\x1b``,
    ``\\u202e``), so that text read from a log or an archive shows as what it is and
    never acts on the terminal or page showing it; ``lines``: newlines and tabs kept."""
    return (_UNPRINTABLE_BUT_LINES if lines else _UNPRINTABLE).sub(_escaped, text)
