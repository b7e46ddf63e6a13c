"""``Advice.recommended`` (the Python answer) is the decision record's count, the one the CLI
renders and ``-f json`` carries: None where an assumed term's range moves the count."""

import gpuscale
from gpuscale.advice.explain.as_json import plain


def test_withheld_count_is_none_from_python_as_in_json():
    # docs/memory.md's example: the assumed fixed cost's range moves the count (2 or 4)
    advice = gpuscale.advise(
        params=7e9, step_ms=1200, batch=8192, device_name="H100", link="nvlink4", strategy="fsdp"
    )
    assert advice.decision.withheld_by == "fixed_cost"
    assert advice.recommended is None
    assert plain(advice.decision)["accelerators"] is None
    assert (
        advice.decision.chosen.accelerators == 2
    )  # the count of the predictions shown, as assumed


def test_count_advised_is_the_same_number_everywhere():
    advice = gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb")
    assert advice.decision.withheld_by is None
    assert advice.recommended == advice.decision.count == plain(advice.decision)["accelerators"]
    assert isinstance(advice.recommended, int)
