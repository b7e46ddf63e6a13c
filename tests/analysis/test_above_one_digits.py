"""A value said above (or below) a bound prints on that side of it: the trends note read
"E' 1.00 above 1: within spread (H100-PCIe-80GB v4.0)" (`report --round v4.0 --round
v4.1 --round v5.0`), its E' 1.0035 written to 2 decimals. Each sentence that states a
comparison writes its number to the digits that show it."""

from __future__ import annotations

import re
from collections import namedtuple

import pandas as pd

from gpuscale.analysis.trends import trends

from .test_trends import round_scores

ABOVE = re.compile(r"E' (\d+\.\d+) above 1")


def _just_above_one() -> pd.DataFrame:
    # E' at 16 against 8: (30 / 14.95) / 2 = 1.0033, within the 0.5% spread of 1
    return round_scores("v4.1", "bert", "bert", [("a", "H100", 8, 30.0), ("b", "H100", 16, 14.95)])


def test_the_trends_note_prints_an_e_prime_just_above_one_above_one() -> None:
    note = trends(_just_above_one())["note"].iloc[0]
    said = ABOVE.findall(note)
    assert said and "within spread" in note, note
    assert all(float(v) > 1 for v in said), note


def test_every_trends_note_of_the_bundled_rounds_says_above_one_above_one() -> None:
    from gpuscale.mlperf.load import load_rounds

    scores = load_rounds(None, ["v4.0", "v4.1", "v5.0"]).scores
    notes = " ".join(trends(scores)["note"])
    said = ABOVE.findall(notes)
    assert said  # v4.0's H100-PCIe-80GB at its largest count: 1.0035
    assert all(float(v) > 1 for v in said), said


def test_the_tooltip_of_an_e_prime_just_above_one_prints_above_one() -> None:
    from gpuscale.analysis.metrics import workload_scaling_table
    from gpuscale.report.figures_common import point_labels

    table = workload_scaling_table(_just_above_one(), "bert", reference="family")
    labels = [t for t in point_labels(table) if "(E' above 1" in t]
    assert len(labels) == 1
    value = re.search(r"E' (\d+\.\d+) \(E' above 1", labels[0])[1]
    assert float(value) > 1, labels[0]


def test_the_study_span_said_above_one_prints_above_one() -> None:
    from gpuscale.analysis.study import _span

    assert _span(pd.Series([0.95, 1.004]), 1.0) == "0.950-1.004"
    assert _span(pd.Series([0.95, 1.12]), 1.0) == "0.95-1.12"
    assert _span(pd.Series([0.77, 0.94])) == "0.77-0.94"


def test_a_rate_just_above_a_peak_prints_above_it() -> None:
    from gpuscale.advice.explain.phrasebook import said as in_words
    from gpuscale.advice.model.hardware import device_record, rate_warnings

    h100 = device_record("H100-SXM5-80GB")
    said = [in_words(f) for f in rate_warnings(h100.peak.bf16 + 0.04, h100, "bf16")]
    rate, top = re.search(
        r"([\d,.]+) TFLOP/s per device is above .* \(([\d,.]+) TFLOP/s", said[0]
    ).groups()
    assert float(rate.replace(",", "")) > float(top.replace(",", "")), said


def test_a_speedup_just_above_linear_prints_above_it() -> None:
    from gpuscale.advice.explain.caveats import row_flags

    # a row's flags as the search keeps them: its speedup where above linear
    Row = namedtuple("Row", "not_positive above_linear linear_speedup accelerators")
    flags = row_flags(Row(False, 8.004, 8.0, 8), pd.Series({"accelerators": 1}))
    speedup, bound = re.search(r"speedup ([\d.]+) above linear, ([\d.]+) on 8", flags).groups()
    assert float(speedup) > float(bound), flags
    # against a first count of 2 the search keeps linear on 8 as 4: said so, not 8
    flags = row_flags(Row(False, 4.5, 4.0, 8), pd.Series({"accelerators": 2}))
    assert "above linear, 4 on 8 devices from 2" in flags, flags


def test_a_rate_just_under_the_floor_prints_under_it() -> None:
    from gpuscale.advice.explain.phrasebook import said as in_words
    from gpuscale.advice.model.hardware import MIN_MFU, device_record, rate_warnings

    h100 = device_record("H100-SXM5-80GB")
    found = rate_warnings(MIN_MFU * h100.peak.tflops("bf16") * 0.9996, h100, "bf16")
    said = [in_words(f) for f in found]
    share, floor = re.search(r", ([\d.]+)% of the .*; under (\d+)%\)", said[0]).groups()
    assert float(share) < float(floor), said


def test_the_studys_within_or_below_the_best_prints_on_its_side() -> None:
    """BERT at 8 keeping 0.9495 of a best 1 read "0.95 (more than 5% below the best)"."""
    from gpuscale.analysis.metrics import workload_scaling_table
    from gpuscale.analysis.study import AROUND, _bert

    e8 = (1 - AROUND) * 0.9999  # just more than 5% below the best (E' 1 at 4)
    rows = [("a", "H100", 4, 40.0), ("b", "H100", 8, 40 / (2 * e8))]
    rows += [("c", "H100", 16, 40 / (4 * 0.7)), ("d", "H100", 32, 40 / (8 * 0.5))]
    table = workload_scaling_table(round_scores("v4.1", "bert", "bert", rows), "bert")
    text = _bert(table, "H100").text
    best, kept = re.search(r"best E' is (\d+\.\d+) at 4; .* at 8 keeps (\d+\.\d+)", text).groups()
    assert "more than 5% below the best" in text
    assert float(kept) < (1 - AROUND) * float(best), text
