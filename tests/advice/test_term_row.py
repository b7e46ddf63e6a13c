"""Renaming a step term is one row of the phrasebook (``data/advice_phrases.json``): the
default answer, ``--explain`` and the table take the term's name and column from its row
when they speak, so a new name in that row shows in every view and the old one in none."""

from __future__ import annotations

import json
from importlib import resources

import pytest

import gpuscale
from gpuscale.advice.explain import phrasebook
from gpuscale.advice.explain.answer import AdviceView, lines
from gpuscale.advice.explain.document import advice_view

ROWS = json.loads(
    (resources.files("gpuscale") / "data" / phrasebook.PHRASES_FILE).read_text("utf-8")
)["terms"]
# docs/advice.md's opening example: a 7M model's 2 ms step over PCIe, the bandwidth deciding
PCIE = {"params": 7e6, "step_ms": 2, "batch": 64, "link": "pcie-phb"}


def _deciding_words(advice: AdviceView) -> list[str]:
    """The answer's ``Decides:`` line and --explain's lines on the step at the focus."""
    decides = [line for line in lines(advice) if line.startswith("Decides:")]
    n = advice.decision.focus.accelerators
    step = [line for line in advice.explanation if line.startswith((f"On {n} ", f"At {n} "))]
    assert len(decides) == 1 and len(step) == 2, (decides, step)
    return [*decides, *step]


def test_the_deciding_term_is_named_by_its_row_in_every_view() -> None:
    advice = gpuscale.advise(**PCIE)
    term = advice.decision.limit.dominant_term
    row = ROWS[term]
    answer, on, at = _deciding_words(advice)
    assert f"({row['name']})" in answer
    assert f"The {row['name']} term" in on and at.endswith(f"the {row['name']} term.")
    view = advice_view(advice, terminal=True)
    assert row["column"] in view.shown


def test_renaming_a_term_is_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    term = gpuscale.advise(**PCIE).decision.limit.dominant_term
    old = ROWS[term]["name"]
    new = f"{old} renamed"
    monkeypatch.setitem(phrasebook.TERMS, term, {**ROWS[term], "name": new})
    words = _deciding_words(gpuscale.advise(**PCIE))
    assert all(new in line for line in words), words
    assert not [line for line in words if old in line.replace(new, "")], words
