"""A count asked for is shown, or said not to be and why (a walk: ``--max-devices 3``
showed N = 1 and 2 and dropped 3 without a note: batch 64 does not split over 3)."""

from __future__ import annotations

import re

import pytest

import gpuscale

ASKED = {"params": 7e6, "step_ms": 2.0, "batch": 64, "link": "pcie-phb"}


@pytest.mark.parametrize("most", [3, 5, 6, 8])
@pytest.mark.parametrize("scaling", ["strong", "weak"])
def test_every_count_up_to_the_maximum_asked_is_shown_or_said(most: int, scaling: str) -> None:
    advice = gpuscale.advise(**ASKED, max_devices=most, scaling=scaling)
    shown = set(advice.predictions["accelerators"])
    searched = [n for n in (1, 2, 4, 8) if n < most] + [most]
    said = " ".join(advice.explanation)
    for n in searched:
        if n in shown:
            continue
        # the count is missing only where the batch kept cannot be split over it
        assert scaling == "strong" and 64 % n != 0, n
        line = re.search(r"Device counts searched: ([\d, ]+); ([\d, ]+) not shown: ([^.]+)", said)
        assert line, said
        assert [int(x) for x in line.group(1).split(", ")] == searched
        assert n in [int(x) for x in line.group(2).split(", ")]
        assert "global batch 64" in line.group(3)
    if scaling == "weak" or 64 % most == 0:
        assert most in shown and "not shown" not in said
