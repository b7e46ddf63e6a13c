"""A link preset refused from Python is named by the keyword the caller gave: ``link=``
sets the request's ``interconnect`` field, but "invalid interconnect" names a keyword they
never passed."""

import pytest

import gpuscale
from gpuscale.tables.requests import FieldError

SEVEN_B = dict(params=7e9, step_ms=900.0, batch=8192)


def test_link_misspelled_is_refused_as_link(golden) -> None:
    with pytest.raises(FieldError) as refused:
        gpuscale.advise(**SEVEN_B, link="nvlnk4")
    assert (refused.value.field, refused.value.value) == ("link", "nvlnk4")
    golden.check("api/advise_refusals", "link_nvlnk4", str(refused.value))


def test_interconnect_misspelled_is_still_refused_as_interconnect() -> None:
    with pytest.raises(FieldError) as refused:
        gpuscale.advise(**SEVEN_B, interconnect="nvlnk4")
    assert (refused.value.field, refused.value.value) == ("interconnect", "nvlnk4")


def test_inter_node_misspelled_is_refused_as_inter_node_with_the_closest() -> None:
    with pytest.raises(FieldError) as refused:
        gpuscale.advise(**SEVEN_B, interconnect="nvlink4", nodes=2, inter_node="ib-ndr")
    assert (refused.value.field, refused.value.value) == ("inter_node", "ib-ndr")
    assert "'ib-ndr400'" in str(refused.value)
