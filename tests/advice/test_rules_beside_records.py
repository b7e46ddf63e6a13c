"""The rules the words read off the records, each computed once beside its record, never
in ``explain`` (issue 71 item 2): an interval too wide to test, the counts as spans, the
break-even's size cases, the N = 1 gap, the fixed term's larger part, the input's load per
device, the fewest devices' batch and whole nodes, and what decides."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

import gpuscale
from gpuscale.advice.derived import BreakEven, FixedTerm, InputRate, OneDeviceRow
from gpuscale.advice.explain.phrasebook import KINDS
from gpuscale.advice.records import Deciding
from gpuscale.hardware.capacity import AcceleratorMemory
from gpuscale.hardware.memory import check
from gpuscale.tables.advice import wide_factor


def test_an_interval_is_too_wide_to_test_past_a_factor_of_four() -> None:
    assert wide_factor(0.5, 1.9) is None  # 3.8x: a test can tell
    assert wide_factor(0.25, 1.5) == pytest.approx(6.0)
    assert wide_factor(0.0, 1.2) == math.inf  # reaching 0: no factor bounds it
    assert wide_factor(math.nan, math.nan) is None  # one run: no interval


def test_three_or_more_consecutive_counts_are_one_span() -> None:
    spans = KINDS["spans"]  # the phrasebook's kind: the counts written
    assert spans((1, 2, 4, 5, 6, 7, 9), None) == "1, 2, 4-7, 9"
    assert spans((3, 5), None) == "3, 5"
    assert spans((), None) == ""


def test_the_break_even_size_is_none_every_size_or_a_size() -> None:
    assert (BreakEven().beats_from, BreakEven().reaches_from) == ("none", "none")
    assert BreakEven(params=1e3).beats_from == "every"  # the smallest model searched
    assert BreakEven(params=2.5e6, target_efficiency_params=4e7).reaches_from == "size"


def test_this_model_disagrees_where_its_own_speedup_is_across_the_size() -> None:
    found = BreakEven(params=1e8, pair_throughput_speedup=1.3, pair_speedup=1.25)
    assert found.own_disagrees(5e7)  # smaller than the size, yet 2 devices beat 1
    assert not found.own_disagrees(2e8)
    falls = BreakEven(params=math.nan, pair_throughput_speedup=1.3)  # no size holds
    assert not falls.own_disagrees(5e7)
    assert found.table_differs  # 1.25 beside 1.3
    assert not replace(found, pair_speedup=1.3001).table_differs  # both print 1.3


def test_the_one_device_gap_the_fixed_terms_larger_part_and_the_load_per_device() -> None:
    assert (OneDeviceRow(gap_ms=-0.25).gap_size_ms, OneDeviceRow(gap_ms=-0.25).under) == (
        0.25,
        False,
    )
    assert OneDeviceRow(gap_ms=0.06).under
    assert OneDeviceRow().gap_size_ms == 0.0  # no bench run at N = 1
    assert FixedTerm(optimizer_excess_ms=2.0, forward_backward_excess_ms=1.0).optimizer_mostly
    assert not FixedTerm(optimizer_excess_ms=1.0, forward_backward_excess_ms=1.0).optimizer_mostly
    assert InputRate(4000.0, 8).per_device == 500.0


def test_the_fewest_devices_split_batch_and_whole_nodes() -> None:
    """7B, Adam, mixed precision on 80 GiB: ZeRO-2 holds it from 2 devices, DDP on none."""
    h100 = AcceleratorMemory("H100", 80, "test")
    counts = (1, 2, 4, 8)
    found, _ = check(
        7e9, asked=("adam", "mixed"), strategy="ddp", memory=h100, counts=counts, per_node=8
    )
    assert found.holding("zero2") == 2
    assert found.split_batch("zero2", 63) == 64  # the smallest batch >= 63 over 2 devices
    assert found.split_batch("zero2", 64) == 64
    assert found.split_batch("ddp", 63) is None
    assert found.would_hold == ("zero2", 2, None)
    assert (found.whole_nodes(4), found.whole_nodes(1)) == (4, 2)


def test_what_decides_takes_a_withholding_term_before_the_cap() -> None:
    advice = gpuscale.advise(params=7e6, step_ms=20, batch=64, interconnect="pcie-phb")
    d = advice.decided
    assert advice.deciding == Deciding.of(d, advice.memory, advice.disagreements, "ddp")
    withheld = Deciding.of(replace(d, withheld_by="link"), None, (), "ddp")
    assert (withheld.kind, withheld.change, withheld.flagged) == ("withheld", d.limit.change, None)
    assert withheld.measured is None and not withheld.memory
