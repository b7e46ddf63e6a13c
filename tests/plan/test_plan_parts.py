"""A short accelerator name that several parts of the results share (``A100``: SXM4 80 GB,
SXM4 40 GB, PCIe 80 GB in v3.0) is read as the catalogue's default part, and the plan says
so and names the parts it was not read as, in its notes, its title, its JSON and its
frame's model (a user walk: ``plan -a A100`` on v3.0 planned A100-SXM4-80GB, saying only
"'A100' read as the accelerator family A100-SXM4-80GB")."""

from __future__ import annotations

import pytest

import gpuscale
from gpuscale.names import UnknownNameError, resolve_family
from gpuscale.planning import PlanRequest, plan_for
from gpuscale.planning.words import plan_document, plan_records

from .test_plan_model import _scores

PARTS = ("A100-SXM4-80GB", "A100-SXM4-40GB", "A100-PCIe-80GB")


def three_parts():
    """BERT on the three A100 parts and on an H100 (another product, never named)."""
    rows = [
        ("v3.0", "bert", f, n, minutes * 8 / n, 56 * n)
        for f, minutes in zip((*PARTS, "H100-SXM5-80GB"), (16.0, 24.0, 31.0, 6.0), strict=True)
        for n in (8, 16)
    ]
    return _scores(rows)


def test_a_short_name_says_the_part_it_chose_and_names_the_others_everywhere() -> None:
    scores = three_parts()
    result = plan_for(PlanRequest(workload="bert", accelerator="A100", devices=[8, 16]), scores)
    chosen = result.model["family"]
    assert chosen in PARTS
    others = sorted(set(PARTS) - {chosen})  # every A100 part of the data but the one planned
    assert result.model["accelerator_asked"] == "A100"
    assert result.model["could_also_mean"] == others
    said = next(n for n in result.notes if "read as the accelerator family" in n)
    assert all(o in said for o in others) and "H100" not in said
    assert "give the full name" in said  # how to pick another
    _, _, title = plan_records(result, terminal=True)
    assert chosen in title and all(o in title for o in others)
    assert plan_document(result)["model"]["could_also_mean"] == others
    frame = gpuscale.plan(workload="bert", accelerator="A100", devices=[8], scores=scores)
    assert frame.attrs["model"]["could_also_mean"] == others
    assert any(all(o in n for o in others) for n in frame.attrs["notes"])


@pytest.mark.parametrize(
    ("name", "family"), [("A100-PCIe-80GB", "A100-PCIe-80GB"), ("A100 40GB", "A100-SXM4-40GB")]
)
def test_a_name_that_picks_one_part_names_no_other(name: str, family: str) -> None:
    result = plan_for(PlanRequest(workload="bert", accelerator=name, devices=[8]), three_parts())
    assert result.model["family"] == family
    assert result.model["could_also_mean"] == []
    _, _, title = plan_records(result, terminal=True)
    assert [p for p in PARTS if p in title] == [family]


def test_every_command_reading_a_family_names_the_other_parts() -> None:
    """analyze and trends read ``--family`` through the same resolver: its note names the
    other parts, and where the default part is absent its refusal names those present."""
    family, said = resolve_family("A100", list(PARTS))
    assert "A100-PCIe-80GB and A100-SXM4-40GB" in said and family == "A100-SXM4-80GB"
    with pytest.raises(UnknownNameError) as refused:
        resolve_family("A100", ["A100-PCIe-80GB", "A100-SXM4-40GB", "H100-SXM5-80GB"])
    assert "A100-PCIe-80GB and A100-SXM4-40GB" in str(refused.value)


def test_a_short_name_naming_the_one_part_that_ran_reads_it_and_says_so() -> None:
    """``plan -a A100`` on v0.7, where A100-SXM4-40GB is the only A100 part with results,
    plans that part (not a refusal naming it as the one to type), saying which part was
    read in its notes and its JSON; refused only where two or more parts ran."""
    family, said = resolve_family("A100", ["A100-SXM4-40GB", "H100-SXM5-80GB"])
    assert family == "A100-SXM4-40GB" and family in said and "A100-SXM4-80GB" in said
    rows = [("v0.7", "bert", "A100-SXM4-40GB", n, 64 / n, 32 * n) for n in (8, 16)]
    rows += [("v0.7", "bert", "V100-SXM2-16GB", n, 128 / n, 32 * n) for n in (8, 16)]
    request = PlanRequest(workload="bert", accelerator="A100", devices=[8])
    result = plan_for(request, _scores(rows))
    document = plan_document(result)
    assert document["model"]["family"] == "A100-SXM4-40GB"
    assert document["model"]["accelerator_asked"] == "A100"
    assert document["model"]["could_also_mean"] == []
    assert said in document["notes"] and said in result.read_as
