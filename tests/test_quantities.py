"""How gpuscale writes numbers for people: never an exponent."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuscale.quantities import devices, filled, format_ms_span, joined, named, number, of_the


def test_examples() -> None:
    assert number(2528) == "2,528"
    assert number(3070.4) == "3,070"
    assert number(222.4) == "222"
    assert number(999.96) == "1,000"
    assert number(0.1759) == "0.176"
    assert number(1.234e-5) == "0.0000123"
    assert number(-0.5) == "-0.5"
    assert number(float("nan")) == number(None) == number(False) == ""
    assert number(True) == "yes"
    assert number("Eos") == "Eos"
    assert number(np.int64(3472)) == "3,472" and number(np.float64(10970.3), 4) == "10,970"
    assert number(np.bool_(True)) == "yes" and number(float("inf")) == "inf"


@given(st.floats(min_value=-1e15, max_value=1e15, allow_nan=False) | st.integers(-(10**15), 10**15))
def test_never_an_exponent_and_the_value_survives(value: float) -> None:
    text = number(value)
    if value != 0 and abs(value) < 1e-6:
        return  # the documented exception
    assert "e" not in text, text
    back = float(text.replace(",", ""))
    # three significant digits, or whole units from 1000 on
    assert math.isclose(back, value, rel_tol=5e-3, abs_tol=0.5 if abs(value) >= 999 else 0)


# Known answers of the formatters, (what was asked, what is written): a formatter's text is
# its result, so each case is the answer itself.
WRITTEN = [
    (lambda: devices(3472, "H100-SXM5-80GB"), "3,472 x H100-SXM5-80GB"),  # thousands separated
    (lambda: devices(8.0, "B200"), "8 x B200"),
    (lambda: devices(8, "NVIDIA NVIDIA H200"), "8 x NVIDIA H200"),  # a vendor word once
    (lambda: named("NVIDIA", "NVIDIA DGX H200"), "NVIDIA DGX H200"),
    (lambda: named("nvidia", "NVIDIA H200"), "nvidia H200"),
    (lambda: named("Dell", "XE9680 with 8x H200"), "Dell XE9680 with 8x H200"),
    (lambda: joined(["RTX A5000", "RTX 4090", "B200"]), "RTX A5000, RTX 4090 and B200"),
    (lambda: joined(["RTX A5000", "RTX 4090"], "or"), "RTX A5000 or RTX 4090"),
    (lambda: joined(["RTX A5000"]), "RTX A5000"),
    (lambda: joined([]), ""),
    (lambda: of_the(1, 1, "run"), "the run"),  # the whole said as such, never "1 of the 1 run"
    (lambda: of_the(2, 2, "bench run"), "both bench runs"),
    (lambda: of_the(3, 3, "process"), "all 3 processes"),
    (lambda: of_the(1, 3, "run"), "1 of the 3 runs"),  # a part in its number
    (lambda: of_the(1200, 1500, "run"), "1,200 of the 1,500 runs"),
]


@pytest.mark.parametrize(("write", "written"), WRITTEN)
def test_known_answers(write: Callable[[], str], written: str) -> None:
    assert write() == written


def test_thousands_are_separated_below_the_digits_too() -> None:
    # 1843 beside 12,130 read as two kinds of number
    assert number(1843.2, 4) == "1,843" and number(1843.25, 5) == "1,843.2"
    assert number(12130.0, 4) == "12,130"


def test_units_never_print_exponents() -> None:
    from gpuscale.quantities import format_count, format_hours, format_ms

    assert format_ms(3210.0) == "3.21 s" and format_ms(0.42) == "0.42 ms"
    assert format_count(7.2e6) == "7.2M" and format_count(1.5e9) == "1.5B"
    assert format_hours(200.0) == "8.33 d" and "e" not in format_hours(1e-6)


def test_articles_follow_the_spoken_name() -> None:
    from gpuscale.quantities import article

    said = {w: article(w) for w in ("RTX 4090", "H100-SXM5-80GB", "B200", "TPU-v5p", "MI300X")}
    assert said == {
        "RTX 4090": "an",
        "H100-SXM5-80GB": "an",
        "B200": "a",
        "TPU-v5p": "a",
        "MI300X": "an",
    }
    assert article("Gaudi2") == "a" and article("accelerator") == "an"
    numbers = ("8.03B", "11M", "18-layer", "80,000", "110M", "1.3B", "7B", "180B")
    assert [article(n) for n in numbers] == ["an", "an", "an", "an", "a", "a", "a", "a"]


def test_a_count_in_a_float_column_is_written_in_full() -> None:
    # params beside an error row's NaN are floats: 199,946, never rounded to 199,900
    assert number(199946.0, 4) == "199,946"
    assert number(np.float64(7_077_888.0)) == "7,077,888"
    assert number(199946.4, 4) == "199,900"  # a measurement keeps its digits


def test_a_range_whose_ends_read_alike_is_one_value() -> None:
    """Never 'errors +35% to +35%': a range whose ends read alike is written as one value,
    in every range gpuscale's sentences write."""
    import math as m

    from gpuscale.advice.calibrate.measured import from_residuals
    from gpuscale.advice.explain.phrasebook import said
    from gpuscale.advice.explain.phrasebook import speedup_interval as interval

    one = said(from_residuals([m.log(1.35)], 2).source)
    assert "(error +35%)" in one and "to +35%" not in one
    two = said(from_residuals([m.log(0.9), m.log(1.2)], 2).source)
    assert "-10% to +20%" in two
    assert interval(1.0, 1.0).split(",")[0] == "1.00x"
    assert interval(1.3, 1.6).split(",")[0] == "1.30-1.60x"


def test_pandas_missing_values_are_empty_cells() -> None:
    """An Int64 count with no value (trends' equilibrium where no criterion picked one)
    printed "<NA>" beside an empty E' cell; every missing value reads alike."""
    import pandas as pd

    counts = pd.Series([4, None], dtype="Int64")
    assert number(counts.iloc[0]) == "4"
    assert number(counts.iloc[1]) == number(float("nan")) == number(pd.NaT) == ""


def test_a_list_is_joined_as_a_sentence_lists_it_in_one_place() -> None:
    """One joiner (``joined``, its answers in ``WRITTEN``): no module joins a list with
    " and " or ", " + " or " of its own (never "RTX A5000 and RTX 4090 and B200")."""
    import re
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "src" / "gpuscale"
    own = re.compile(r"""["'] (and|or) ["']\.join\(|\.join\([^)]*\[:-1\]\)""")
    found = [
        f"{p.relative_to(package)}:{k}"
        for p in package.rglob("*.py")
        if p.name != "quantities.py"
        for k, line in enumerate(p.read_text().splitlines(), 1)
        if own.search(line)
    ]
    assert found == []


def test_counts_take_their_number_never_a_parenthesised_plural() -> None:
    """Never "left out 1 run(s) of another device", "1 line(s) of results.jsonl skipped",
    "Bundled round(s)": a count says its noun in the number it takes (``counted``, or
    ``noun_for`` before a list). No string the package writes, nor the report's
    templates, holds "word(s)"; the plural rule covers -es and -ies nouns."""
    import ast
    import re
    from pathlib import Path

    from gpuscale.quantities import counted, noun_for

    assert counted(1, "run") == "1 run" and counted(2, "run") == "2 runs"
    assert counted(0, "process") == "0 processes" and counted(1, "process") == "1 process"
    assert counted(1_200, "property") == "1,200 properties" and counted(3, "day") == "3 days"
    assert noun_for(1, "field") == "field" and noun_for(2, "batch") == "batches"
    package = Path(__file__).resolve().parents[1] / "src" / "gpuscale"
    parenthesised = re.compile(r"[A-Za-z]\((s|es|ies)\)")
    found = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            string = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if string and parenthesised.search(node.value):
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    for path in sorted((package / "report" / "templates").rglob("*")):
        for k, line in enumerate(path.read_text().splitlines(), 1):
            if parenthesised.search(line):
                found.append(f"{path.relative_to(package)}:{k}")
    assert found == []


def test_values_that_differ_never_print_alike() -> None:
    from gpuscale.quantities import decimals_apart, fixed_apart, numbers_apart

    assert fixed_apart(1.0035, 1.0) == "1.004" and fixed_apart(1.12, 1.0) == "1.12"
    assert fixed_apart(0.7996, 0.8) == "0.7996" and fixed_apart(1.0, 1.0) == "1.00"
    assert decimals_apart(0.98, 0.70) == 2 and decimals_apart(3264.0, 3264.4, decimals=0) == 1
    assert numbers_apart(989.45, 989.4) == ("989.5", "989.4")
    assert numbers_apart(1979.0, 989.0) == ("1,979", "989")
    assert numbers_apart(8.004, 8.0) == ("8.004", "8.000")


@given(st.text())
def test_printable_leaves_no_control_character_and_changes_nothing_else(text: str) -> None:
    from gpuscale.quantities import UNPRINTABLE, printable

    out = printable(text)
    assert not re.search(UNPRINTABLE, out)
    if not re.search(UNPRINTABLE, text):
        assert out == text
    kept = printable(text, lines=True)
    assert kept.count("\n") == text.count("\n") and kept.count("\t") == text.count("\t")


@pytest.mark.parametrize(
    ("value", "said"), [("the basis", " (the basis)"), (3, " (3)"), ("", ""), (None, ""), (0, "")]
)
def test_a_clause_is_said_only_where_it_has_a_value(value: object, said: str) -> None:
    assert filled(" ({})", value) == said


@pytest.mark.parametrize(
    ("low", "high", "said"),
    [
        (1.21, 1.434, "1.21-1.43"),
        (2, 2_048, "2-2,048"),
        (float("nan"), 3.0, ""),
        (None, 1, ""),
        # v4.1 Stable Diffusion, Dell XE9680x8H200-SXM-141GB: 3 figures write both ends 34.0
        (33.9709, 34.0154, "33.97-34.02"),
        (5.0, 5.0, "5.00-5.00"),
    ],
)
def test_an_interval_cell_is_empty_without_its_low_end(
    low: object, high: object, said: str
) -> None:
    from gpuscale.quantities import number_range

    assert number_range(low, high) == said


def test_a_range_of_times_says_its_unit_once_and_a_zero_low_end_as_none() -> None:
    """``0.782 ms (0 ms-0.782 ms)`` wrote the unit twice and a fixed cost that may be
    nothing as "0 ms"; each end reads to the other's decimals, in the high end's unit."""
    assert format_ms_span(0.412, 0.56) == "0.412-0.560 ms"
    assert format_ms_span(0.0, 0.782) == "none to 0.782 ms"
    assert format_ms_span(850.0, 3450.0) == "0.850-3.45 s"
    assert format_ms_span(2.5, 2.5) == "2.50 ms"
