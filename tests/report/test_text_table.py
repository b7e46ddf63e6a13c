"""A text table's layout (``gpuscale.report.text_table``): cell text, least and fitted
widths, and the columns left out, lowest priority first, when a terminal is narrow."""

from __future__ import annotations

import numpy as np

from gpuscale.report.text_table import (
    cell_text,
    cells_text,
    columns_that_fit,
    fit_widths,
    least_width,
    left_out_note,
)


def test_cell_text_uses_the_columns_spec_else_four_digits() -> None:
    assert cell_text(12.345678, ".2f") == "12.35"
    assert cell_text(12.345678, None) == "12.35"
    assert cell_text(float("nan"), ".2f") == cell_text(None, None)


def test_a_whole_float_beside_fractions_keeps_its_figures_a_count_does_not() -> None:
    """A column of measures writes 2.0 as 2.000 beside 3.5's 3.500 (0 stays 0); a column
    of whole floats (counts through a NaN) and an int column keep the counts' form."""
    nan = float("nan")
    rows = [[0.0, 2.0, 8, (1.0, 2.5)], [2.0, nan, 16, (3.0,)], [3.5, 199946.0, 32, (4.0,)]]
    text = cells_text(rows, [None, None, None, None])
    assert [r[0] for r in text] == ["0", "2.000", "3.500"]
    assert [r[1] for r in text] == ["2", "", "199,946"]
    assert [r[2] for r in text] == ["8", "16", "32"]
    assert [r[3] for r in text] == ["1.000; 2.500", "3.000", "4.000"]
    assert cells_text([[np.float32(2.0)], [np.float32(0.25)]], [None]) == [["2.000"], ["0.2500"]]
    assert cells_text([[2.0], [3.5]], [".1f"]) == [["2.0"], ["3.5"]]  # a spec rules


def test_a_column_named_as_a_measure_keeps_its_figures_when_all_whole() -> None:
    """A column whose name says a measure (a unit last, a ratio word) writes 1.0 as 1.000
    with no fraction beside it; a count's column (``accelerators``, ``global_batch``) and a
    setting in MiB (``bucket_mb``) keep 8."""
    rows = [[1.0, 1.0, 20.0, 8.0, 8.0, 25.0, 1.0, 300.0, 2.0]] * 2
    columns = ["convergence_factor", "speedup_low", "step_ms", "accelerators", "global_batch"]
    columns += ["bucket_mb", "compute_share", "power_w_mean", "min_devices"]
    text = cells_text(rows, [None] * 9, columns)
    assert text[0] == ["1.000", "1.000", "20.00", "8", "8", "25", "1.000", "300.0", "2"]
    assert cells_text(rows, [None] * 9)[0] == ["1", "1", "20", "8", "8", "25", "1", "300", "2"]


def test_least_width_keeps_numbers_whole_and_caps_long_words() -> None:
    assert least_width("busbw GB/s", ["123456.78"], True) == len("123456.78")
    assert least_width("name", ["a" * 40], False) == 16
    assert least_width("submitter", ["ab cd"], False) == len("submitter")


def test_fit_widths_shrinks_the_widest_first_and_never_below_least() -> None:
    headers, rows = ["a", "b"], [["x" * 30, "y" * 10]]
    assert fit_widths(headers, rows, [1, 1], 100) == [30, 10]
    widths = fit_widths(headers, rows, [5, 10], 25)
    assert widths is not None and sum(widths) <= 25 and widths[1] == 10 and widths[0] >= 5
    assert fit_widths(headers, rows, [20, 10], 25) is None


def test_columns_that_fit_drop_the_lowest_priority_first() -> None:
    columns = ["system", "accelerators", "submitter", "cluster"]
    rows = [["a-long-system-name", "8", "some-submitter-name", "c1"]]
    numeric = [False, True, False, False]
    wide = columns_that_fit(200, columns, columns, rows, numeric, ["cluster", "submitter"])
    assert wide[0] == [0, 1, 2, 3] and wide[2] == []
    keep, widths, dropped = columns_that_fit(
        60, columns, columns, rows, numeric, ["cluster", "submitter"]
    )
    assert dropped == ["cluster"] and keep == [0, 1, 2] and widths is not None
    # too narrow even without the columns it may drop: shown a line per column (a record
    # at a time), so none is dropped "for width" (--explain said so of a vertical record)
    keep, widths, dropped = columns_that_fit(30, columns, columns, rows, numeric, ["submitter"])
    assert dropped == [] and keep == [0, 1, 2, 3] and widths is None


def test_a_column_empty_in_every_row_is_left_out_and_said() -> None:
    """``analyze -b dlrm --decompose`` showed "expected epochs to converge" blank in every
    row, at the cost of its header's width; it is left out, said under the table as the
    columns dropped for width are, whatever the width; asked by name (no drop order) it
    stays."""
    columns = ["system", "speedup", "expected", "cluster"]
    rows = [["a", "1.20", "", "c1"], ["b", "2.40", "", "c2"]]
    numeric = [False, True, True, False]
    order = ["cluster", "expected"]
    keep, widths, dropped = columns_that_fit(200, columns, columns, rows, numeric, order)
    assert (keep, list(dropped), dropped.empty) == ([0, 1, 3], [], ["expected"])
    note = left_out_note(dropped, "", "", {"-f"}, vertical=False)
    assert note == "(not shown, empty in every row: expected; -f csv prints every column)"
    keep, widths, dropped = columns_that_fit(26, columns, columns, rows, numeric, order)
    assert (keep, list(dropped), dropped.empty) == ([0, 1], ["cluster"], ["expected"])
    assert "for width: cluster; empty in every row: expected" in left_out_note(
        dropped, "", "", (), vertical=False
    )
    keep, widths, dropped = columns_that_fit(5, columns, columns, rows, numeric, order)
    assert (keep, widths, dropped.empty) == ([0, 1, 3], None, ["expected"])  # a line each
    keep, _, dropped = columns_that_fit(200, columns, columns, rows, numeric, [])
    assert (keep, dropped.empty) == ([0, 1, 2, 3], [])
    assert columns_that_fit(200, columns, columns, [], numeric, order)[0] == [0, 1, 2, 3]
