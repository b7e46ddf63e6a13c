"""Where memory (or a refusal) rules every count predicted out, the decision names none:
``chosen`` and ``accelerators`` are null, and the short answer reads no focus at a count
that cannot run (no "Decides" nor remedy line; the "No count advised" line says why)."""

from __future__ import annotations

import gpuscale
from gpuscale.advice.explain.answer import change_line, deciding_line, lines
from gpuscale.advice.explain.as_json import advice_document
from gpuscale.advice.types import FindingKind

# a 70B model under FSDP on H100s: 16 devices hold it (16 bytes a parameter), the global
# batch 8 does not split over 16, 32 or 64: the rows predicted (1-8) hold none
SEVENTY_B = dict(
    params=70e9,
    step_ms=1000.0,
    batch=8,
    strategy="fsdp",
    link="nvlink4",
    max_devices=64,
)


def test_no_count_predicted_holds_it_so_none_is_chosen() -> None:
    advice = gpuscale.advise(**SEVENTY_B)
    d = advice.decision
    assert advice.memory is not None and advice.memory.fits_from("fsdp") == 16
    assert not d.holds and d.count is None and d.chosen is None
    assert d.read.accelerators == 1  # read as if memory allowed (--explain says so)
    decision = advice_document(advice)["decision"]
    assert (decision["chosen"], decision["accelerators"], decision["holds"]) == (None, None, False)
    assert "read" not in decision
    # the short answer: memory and why none is advised, the counts not shown; no focus read
    assert (deciding_line(advice), change_line(advice)) == ("", "")
    # and the one warning: a 1,000 ms step measured on one device that holds no 70B state
    kinds = [w.kind for w in advice.calibration.said.warnings]
    assert kinds == [FindingKind.MEMORY_MEASURED_BEYOND]
    assert len(lines(advice)) == 4


def test_a_refusal_on_one_device_leaves_it_the_only_pick() -> None:
    """300M on 4 nodes (the docs' example): an input is IMPLAUSIBLE, one device holds it; the
    counts above 1 (32 predicted fastest) are no pick."""
    advice = gpuscale.advise(
        params=300e6,
        step_ms=10.0,
        batch=16,
        nodes=4,
        gpus_per_node=8,
        link="nvlink4",
        inter_node="ib-ndr400",
        workload="llama2_70b_lora",
    )
    d, picks = advice.decision, advice.picks
    assert d.refused and d.chosen is not None and d.chosen.accelerators == 1
    assert (d.fastest, picks.efficient, picks.numbers.best_n, picks.numbers.rows) == (1, 1, 1, 1)
    assert set(picks.equilibrium.values()) <= {1, None} and picks.numbers.next_n is None


def test_a_count_withheld_by_a_range_is_still_chosen() -> None:
    """1B under DDP: one device holds it; the assumed ranges move the count (withheld), but
    nothing rules the 8 devices out: chosen is the count read."""
    advice = gpuscale.advise(**{**SEVENTY_B, "params": 1e9, "strategy": "ddp"})
    d = advice.decision
    assert d.holds and d.withheld_by is not None and d.count is None
    assert d.chosen == d.read and d.read.accelerators == 8
    assert advice_document(advice)["decision"]["chosen"]["accelerators"] == 8


def test_no_other_rule_picks_a_count_none_predicted_holds() -> None:
    """The counts other rules pick (efficient, cheapest, the equilibrium's) and the numbers
    that make them are null where no count predicted holds the model, not 1 device."""
    advice = gpuscale.advise(**SEVENTY_B, price_per_device_hour=2.0)
    picks = advice.picks
    assert (picks.efficient, picks.cheapest, picks.numbers) == (None, None, None)
    assert set(picks.equilibrium.values()) == {None}
    rec = advice_document(advice)["recommendation"]
    assert (rec["efficient"], rec["cheapest"], rec["equilibrium_numbers"]) == (None, None, None)
    assert set(rec["equilibrium"].values()) == {None}


def test_other_rules_pick_only_counts_that_hold_the_model() -> None:
    """14B under FSDP on 8 H100s: 4 devices hold it; every pick, the best efficiency's count
    and the rows the equilibrium reads start there (N = 1's 100% is no best)."""
    advice = gpuscale.advise(
        **{**SEVENTY_B, "params": 14e9, "max_devices": 8}, price_per_device_hour=2.0
    )
    fewest = advice.memory.fits_from("fsdp")
    picks, numbers = advice.picks, advice.picks.numbers
    assert fewest == 4 and advice.decision.holds
    counts = (picks.cheapest, numbers.best_n, *picks.equilibrium.values(), picks.efficient)
    assert all(n >= fewest for n in counts if n is not None)
    assert numbers.best_n == 4 and numbers.best_efficiency < 1 and numbers.rows == 2
