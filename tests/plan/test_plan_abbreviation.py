"""An abbreviated accelerator (``H10``) is refused naming all that may be given in its
place: the families it begins in full and the product names read as one of them
(``H100``, read as H100-SXM5-80GB); a typo of a workload is refused, the closest offered
(docs/plan.md says both)."""

from __future__ import annotations

import re

import pytest

from gpuscale.names import UnknownNameError, resolve_family
from gpuscale.planning import PlanRequest, plan_for

FAMILIES = ["H100-NVL-94GB", "H100-PCIe-80GB", "H100-SXM5-80GB", "B200", "TPU-v5p"]


def _given(error: UnknownNameError) -> set[str]:
    """The names an abbreviation's refusal says to give (after ``give``)."""
    return set(re.findall(r"[A-Z][\w-]*\d[\w-]*", str(error).split("give", 1)[1]))


def test_an_abbreviation_names_the_families_and_the_products_read_as_them() -> None:
    with pytest.raises(UnknownNameError) as refused:
        resolve_family("H10", FAMILIES)
    assert _given(refused.value) == {"H100-NVL-94GB", "H100-PCIe-80GB", "H100-SXM5-80GB", "H100"}
    family, _ = resolve_family("H100", FAMILIES)  # the product named is read
    assert family == "H100-SXM5-80GB"


def test_a_product_that_is_a_family_is_named_once() -> None:
    with pytest.raises(UnknownNameError) as refused:
        resolve_family("TPU", FAMILIES)
    assert str(refused.value).count("TPU-v5p") == 1


def test_a_workload_typo_is_refused_with_the_closest_name() -> None:
    with pytest.raises(UnknownNameError) as refused:
        plan_for(PlanRequest(workload="bret", accelerator="H100", devices=(8,)))
    assert "'bert'" in str(refused.value)
