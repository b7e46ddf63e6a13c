"""The energy sentences' per-sample figures in a unit that shows them."""

from __future__ import annotations

import re

import pandas as pd

from gpuscale import load_round
from gpuscale.analysis.energy_per_result import energy_scale_sentences, energy_table


def test_per_sample_energy_is_never_shown_as_zero() -> None:
    """3D U-Net's 13.5 J and 17.7 J per sample read "0.0 kJ -> 0.0 kJ" (a user walk)."""
    said = energy_scale_sentences(energy_table(load_round("v4.0")))
    pairs = [re.search(r"per sample (\S+) (k?J) -> (\S+) (k?J)", s) for s in said]
    found = [m.groups() for m in pairs if m]
    assert found, said
    for low, unit, high, unit_again in found:
        assert unit == unit_again and float(low.replace(",", "")) > 0
        assert float(high.replace(",", "")) > 0
    assert any(unit == "J" for _, unit, _, _ in found)  # the small ones in joules


def test_an_empty_energy_per_sample_is_said_why() -> None:
    """v5.0 RetinaNet's energy per sample was an empty cell without a word: each workload
    with empty cells gets a note naming the unit its round counts convergence in."""
    from gpuscale.analysis.energy_per_result import energy_view
    from gpuscale.tables import display_name

    tables = load_round("v4.0")
    view = energy_view(tables, sorted(tables.scores["workload"].dropna().unique()))
    empty = view.frame[view.frame["energy_per_sample_j"].isna()]
    assert not empty.empty  # the round has such rows: the test can fail
    for workload, rows in empty.groupby("workload"):
        [note] = [
            n
            for n in view.notes
            if n.startswith(f"{display_name(workload)} (v4.0): no energy per sample")
        ]
        for unit in set(rows["convergence_unit"]) - {"samples"}:
            assert f"count its convergence in {unit}" in note
    filled = set(view.frame.dropna(subset=["energy_per_sample_j"])["workload"]) - set(
        empty["workload"]
    )
    per_sample = [n for n in view.notes if "no energy per sample" in n]
    assert not [n for w in filled for n in per_sample if n.startswith(display_name(w))]


def test_the_headline_says_a_result_as_the_sentences_under_it_do() -> None:
    """The headline said Llama2 70B LoRA's least energy "11,800 kJ, 3,830 J per sample"
    where the sentence on the same result said "11,770 kJ ... per sample 3.83 kJ": one
    result in two precisions and two units."""
    from gpuscale.analysis.energy_per_result import energy_headline

    frame = energy_table(load_round("v4.0"))
    frame = frame[frame["workload"] == "llama2_70b_lora"]
    (headline,) = energy_headline(frame)
    best = frame.loc[frame["energy_kj"].idxmin()]
    said = re.search(r"([\d,]+) kJ, (\S+) (k?J) per sample", headline)
    assert said, headline
    assert float(said.group(1).replace(",", "")) == round(best["energy_kj"])
    per_sample = float(said.group(2)) * (1000 if said.group(3) == "kJ" else 1)
    assert abs(per_sample - best["energy_per_sample_j"]) <= 0.005 * best["energy_per_sample_j"]
    sentence = next(
        s
        for s in energy_scale_sentences(frame)
        if f"({best['org']})" in s and f"{int(best['accelerators'])} accelerators" in s
    )
    assert f"train {said.group(1)} kJ at" in sentence  # the same figure, to the kJ
    per = re.search(r"per sample (\S+) (k?J) ->", sentence)
    assert per and per.groups() == (said.group(2), said.group(3))  # the same unit


def test_a_round_without_power_logs_says_where_they_are(golden) -> None:
    """Energy of rounds with no power logs: empty, and the reason says what to give
    instead: rounds older than the first with power results are told it; a round from then
    on that lacks them (here v4.0 kept to results without power) is told they are
    optional; the round named in the hint has power results."""
    import dataclasses

    from gpuscale.analysis.energy_per_result import FIRST_POWER_ROUND, energy_view

    old = load_round("v3.0", "v3.1")
    view = energy_view(old, sorted(old.scores["workload"].dropna().unique()))
    assert view.frame.empty and view.empty.startswith("no power logs in v3.0, v3.1: ")
    golden.check("analysis/energy_words", "rounds before power results", view.empty)
    first = load_round(FIRST_POWER_ROUND)
    assert first.scores["energy_kj"].notna().any()
    # results without power logs: no run with an energy either (a result whose kept run
    # lost its energy has power logs, and is said so)
    metered = set(
        first.runs.dropna(subset=["energy_kj"])[["org", "system_id"]].itertuples(index=False)
    )
    scores = first.scores
    keys = pd.Series(list(zip(scores["org"], scores["system_id"], strict=True)), index=scores.index)
    unpowered = scores[scores["energy_kj"].isna() & ~keys.isin(metered)]
    view = energy_view(
        dataclasses.replace(first, scores=unpowered),
        sorted(unpowered["workload"].dropna().unique()),
    )
    assert view.frame.empty and "optional" in view.empty
    golden.check("analysis/energy_words", "a round from then on without them", view.empty)


def test_a_result_left_without_energy_says_which_power_log_reading_is_why() -> None:
    """v4.0 SMC's 64-accelerator RetinaNet results keep a run whose node logs read -9 to
    -43 W: neither result has an energy, and the note names both results and the
    readings the round's problems give (it named only the problems table)."""
    from gpuscale.analysis.energy_per_result import energy_unknown

    (note,) = energy_unknown(load_round("v4.0"), ["retinanet"])
    assert note.startswith("RetinaNet (v4.0): no energy to train for ")
    assert note.count("8xSMC-H100-SXM-80GB (64 accelerators)") == 2
    readings = re.findall(r"power_reading (-\d+) W is outside the physical range", note)
    assert readings and all(-43 <= int(w) < 0 for w in readings), note
    assert re.search(r"and \d+ more\)", note)
    frame = energy_table(load_round("v4.0"))
    smc = frame[(frame["workload"] == "retinanet") & (frame["accelerators"] == 64)]
    assert smc.empty or smc["energy_kj"].isna().all()
