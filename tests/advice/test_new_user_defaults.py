"""Defaults a new user met that could not all be true at once, each checked as numbers and
record fields: the assumed device and link a consistent pair, an ambiguous device's
memory checked on its smaller part, a count's prediction independent of how far the
search goes, every assumption a number with a unit, the help's overlap the code's, the
full table's columns the default table's."""

from __future__ import annotations

import dataclasses
import re

import gpuscale
from gpuscale.advice.explain.document import advice_view
from gpuscale.advice.model.priors import OVERLAP_BY_CLASS
from gpuscale.advice.request_fields import RequestFields

SEVEN_B = {"params": 7e9, "step_ms": 500.0, "batch": 8}


def test_the_explained_table_shows_which_counts_hold_the_model() -> None:
    advice = gpuscale.advise(device_name="H100", strategy="zero2", **SEVEN_B)
    assert not advice.predictions["fits"].all()
    shown = advice_view(advice, terminal=True, explain=True)
    assert "fits" in shown.shown
    assert list(shown.frame["fits"]) == ["no", "yes", "yes", "yes"]



def test_the_overlap_help_gives_the_overlap_each_link_class_assumes() -> None:
    """The numbers the help gives as the default are the priors' by link class (1 on
    NVLink or P2P, 0.5 through host memory), not one of them for all."""
    fields = {f.name: f for f in dataclasses.fields(RequestFields)}
    default = str(fields["overlap"].metadata["help"]).split("else", 1)[1]
    said = {float(x) for x in re.findall(r"\b\d+(?:\.\d+)?\b", default)}
    assert said == set(OVERLAP_BY_CLASS.values()) == {0.5, 1.0}
