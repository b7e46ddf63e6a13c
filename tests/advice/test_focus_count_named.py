"""The count whose step the advice details is said for what it is, in every sentence that
names it. A walk saw "Use 2 devices", the fastest at 8, then "On 4 devices a step takes
..." with no word why 4: the advice details the next count above the one advised (where
the next step would go), which may be neither the advised nor the fastest. The counts
here are read off the predictions table, not the decision."""

from __future__ import annotations

import re

import pytest

import gpuscale

# (advised, fastest, detailed) as they come out: 2, 8, 4 / 4, 8, 8 / 1, 1, 2
CASES = {
    "advised 2, fastest 8": dict(step_ms=20.0, batch=64, fixed_ms=3.0, max_devices=8),
    "advised 4, fastest 8": dict(step_ms=60.0, batch=64, fixed_ms=3.0, max_devices=8),
    "advised 1 (A10 bound)": dict(step_ms=40.0, batch=32, device_name="A10", max_devices=4),
}


def _counts(advice) -> tuple[int, int, int]:
    """(advised, fastest, the next count above the advised one) from the table."""
    frame = advice.predictions
    trusted = frame[frame["flags"] == ""]
    advised = (
        advice.decision.chosen.accelerators
    )  # the count shown (None from `recommended`: withheld)
    fastest = int(trusted.loc[trusted["time_to_train_min"].idxmin(), "accelerators"])
    larger = [int(n) for n in trusted["accelerators"] if n > advised]
    return advised, fastest, min(larger)


def _advised(advised: int, word: str = "advised") -> str:
    """How the advised count is named, its devices said; a count withheld is the one
    "predicted as assumed"."""
    return f"the 1 device {word}" if advised == 1 else f"the {advised} devices {word}"


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_count_detailed_is_named_for_what_it_is(case: str) -> None:
    advice = gpuscale.advise(params=7e6, link="pcie-phb", **CASES[case])
    advised, fastest, next_up = _counts(advice)
    word = "advised" if advice.decision.count is not None else "predicted as assumed"
    steps = [s for s in advice.explanation if re.match(r"On \d+ devices", s)]
    assert len(steps) == 1, advice.explanation
    step = steps[0]
    detailed = int(re.match(r"On (\d+) devices", step).group(1))
    assert detailed == next_up  # the next count above the advised one
    first = "the fastest and " if fastest == detailed else ""  # said before the count it is
    assert f"{detailed} devices, {first}the next count above {_advised(advised, word)}" in step
    if fastest not in (detailed, advised):
        assert f"the fastest is {fastest}" in step
    # every other sentence naming that count says what it is
    naming = [s for s in advice.explanation if re.search(rf"\b{detailed} devices\b", s)]
    assert len(naming) >= 2, naming
    for sentence in naming:
        said = f"{detailed} devices, the next count above {_advised(advised, word)}"
        assert (
            said in sentence.replace(first, "")
            or f"the next, {detailed} devices" in sentence
            or f"{detailed} devices beat 1" in sentence  # the break-even: 2 against 1
            # the fastest count's own line says what it is first
            or sentence.startswith(f"Fastest: {detailed} devices")
            or f"{detailed} devices, the largest count predicted" in sentence
            # the step interval lists each row's, as the table does
            or f"{detailed} devices step " in sentence
            # a withheld count's reading: the count at one end of a term's range
            or re.search(rf"at [^,;()]+, {detailed} devices \(", sentence) is not None
        ), sentence


def test_the_input_pipeline_says_which_count_it_reads() -> None:
    advice = gpuscale.advise(params=7e6, link="pcie-phb", **CASES["advised 2, fastest 8"])
    largest = int(advice.predictions["accelerators"].max())
    (said,) = [s for s in advice.explanation if s.startswith("Input pipeline")]
    assert f"at {largest} device{'' if largest == 1 else 's'}, the largest count predicted" in said
