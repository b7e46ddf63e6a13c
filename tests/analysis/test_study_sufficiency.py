"""The study compared, where the data is too thin: a statement whose test has too little
data says "not testable" with the reason read from the table (the counts a test needs
that the family lacks, never one it has), and never a verdict."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from gpuscale.analysis.metrics import scaling_table
from gpuscale.analysis.study import compare_with_study

from .tables import scores

VERDICTS = ("agrees", "partly", "disagrees")
FALLS = "efficiency falls as accelerators are added"
MASSIVE = "massive systems are the fastest but the least efficient"
WHY = "the fall is communication and synchronisation"
BERT = "most efficient around 8 accelerators, dropping past 16"
LLAMA = "E' above 1 at 4-8 accelerators, falling fast from 16 on"
SD = "loses efficiency sharply past 8 accelerators"
LINEAR = "RetinaNet scales the most linearly of the four"
# what each count-dependent statement needs: distinct counts of the family
NEEDS = {FALLS: 3, MASSIVE: 2, WHY: 2}


def table(systems: list[tuple[int, float]], workload: str, family: str = "H100") -> pd.DataFrame:
    """One family's systems (accelerators, minutes) as a scaling table."""
    rows = [(f"s{i}", family, n, t) for i, (n, t) in enumerate(systems)]
    frame = scores(rows, workload=workload).assign(global_batch_size=8.0)
    return scaling_table(frame, workload)


def statements(tables: dict[str, pd.DataFrame]) -> dict[tuple[str, str], object]:
    return {(s.workload, s.finding): s for s in compare_with_study(tables)}


def reason(text: str) -> str:
    """The reason of a "not testable" text (between the claim and the verdict)."""
    assert text.endswith(": not testable."), text
    return text.rsplit(": not testable.", 1)[0].split(". ", 1)[1]


def lacked(text: str) -> set[int]:
    """The counts a reason says the family has no system at ("no system at 8 or at 16")."""
    found = re.search(r"no system ((?:at \d+|past \d+|, | or )+)", reason(text))
    return {int(n) for n in re.findall(r"at (\d+)", found.group(1))} if found else set()


def had(text: str) -> set[int]:
    """The counts a reason says the family has ("its counts: 2 and 16")."""
    found = re.search(r"its counts: ([\d, and]+)\)", reason(text))
    return {int(n.replace(",", "")) for n in re.findall(r"[\d,]*\d", found.group(1))}


ONE_COUNT = [(8, 10.0), (8, 12.0), (8, 15.0)]


@pytest.mark.parametrize("workload", ["bert", "llama2_70b_lora", "stable_diffusion", "retinanet"])
def test_one_distinct_count_is_not_testable_on_every_count_statement(workload: str) -> None:
    """Three systems, all at 8 (the walk's B200 BERT was one): no statement about how E'
    changes with the count gets a verdict, and each reason names the one count there is."""
    found = statements({workload: table(ONE_COUNT, workload)})
    for (_, finding), s in found.items():
        assert s.verdict == "not testable", s.text
        assert "8 accelerators" in s.text or had(s.text) == {8}, s.text
        if finding in NEEDS:
            assert f"at least {NEEDS[finding]} counts" in s.text


@pytest.mark.parametrize("minutes", [[366.0], [366.0, 380.0], [366.0, 380.0, 400.0]])
def test_the_systems_at_one_count_are_said_in_their_number(minutes: list[float]) -> None:
    """A walk: "every system has 8 accelerators" of ONE system (a round's only B200):
    the words follow how many systems the family has at its one count."""
    found = statements({"bert": table([(8, m) for m in minutes], "bert", "B200")})
    said = {1: "the one system has", 2: "both systems have", 3: "all 3 systems have"}
    for finding in NEEDS:
        text = found["bert", finding].text
        assert f"Within B200 {said[len(minutes)]} 8 accelerators" in text, text
        assert len(minutes) > 1 or "every system" not in text


def test_two_systems_at_the_same_count_are_not_the_largest() -> None:
    """The walk's subset: two RTX A5000 systems, both at 2 accelerators, were "the largest
    (2 accelerators) ... partly"; with a second count the statement is judged."""
    same = statements({"bert": table([(2, 366.0), (2, 380.0)], "bert", "RTX A5000")})
    assert same["bert", MASSIVE].verdict == "not testable"
    assert "both systems have 2 accelerators" in same["bert", MASSIVE].text
    two = statements({"bert": table([(2, 366.0), (8, 100.0)], "bert", "RTX A5000")})
    assert two["bert", MASSIVE].verdict in VERDICTS
    assert two["bert", FALLS].verdict == "not testable"  # 2 counts: no trend
    assert "the systems have 2 and 8 accelerators (2 counts)" in two["bert", FALLS].text


@pytest.mark.parametrize(
    "counts",
    [(16, 64, 128), (2, 8), (4, 8, 16), (2, 16, 32), (8, 32), (1, 2, 4)],
)
def test_bert_reason_names_exactly_the_missing_counts(counts: tuple[int, ...]) -> None:
    """v1.1's IPU systems at 16, 64 and 128 were said to lack "8, 16 or beyond": the reason
    names 8 and 16 exactly when absent, "past 16" exactly when no count is larger, and
    the counts the family has, none of them as missing."""
    systems = [(n, 100.0 * 16 / n / (1 - 0.02 * i)) for i, n in enumerate(counts)]
    s = statements({"bert": table(systems, "bert")})["bert", BERT]
    assert s.verdict == "not testable"
    assert lacked(s.text) == {8, 16} - set(counts)
    assert ("past 16" in reason(s.text)) == (max(counts) <= 16)
    assert had(s.text) == set(counts)


@pytest.mark.parametrize("counts", [(4, 16, 32), (4, 8), (2, 4, 32)])
def test_stable_diffusion_reason_names_exactly_the_missing_counts(counts: tuple) -> None:
    systems = [(n, 400.0 / n) for n in counts]
    s = statements({"stable_diffusion": table(systems, "stable_diffusion")})
    s = s["stable_diffusion", SD]
    assert s.verdict == "not testable"
    assert lacked(s.text) == {8, 16} - set(counts)
    assert had(s.text) == set(counts)


def test_llama2_needs_a_system_beside_the_reference_at_4_to_8() -> None:
    """The reference's E' is 1 by definition, so a family whose only system at 4-8 is its
    reference cannot show E' above 1 there; one count at 16-64 gives no loss per
    doubling. Each is said, with the counts the family has."""
    llama = "llama2_70b_lora"
    only_ref = statements({llama: table([(4, 100.0), (16, 30.0), (32, 18.0)], llama)})[llama, LLAMA]
    assert only_ref.verdict == "not testable"
    assert "only system at 4-8 is its reference" in only_ref.text
    assert had(only_ref.text) == {4, 16, 32}
    one_later = statements({llama: table([(4, 100.0), (8, 45.0), (32, 18.0)], llama)})[llama, LLAMA]
    assert one_later.verdict == "not testable"
    assert "one count at 16-64 (32;" in one_later.text
    both = statements({llama: table([(4, 100.0), (8, 45.0), (16, 30.0), (64, 15.0)], llama)})
    assert both[llama, LLAMA].verdict in VERDICTS


def test_no_loss_is_nothing_to_attribute() -> None:
    """E' above 1 at the largest count (4 x 100 / (8 x 40) = 1.25): there is no fall to
    attribute to communication (it read "agrees" under a text ending "partly")."""
    s = statements({"bert": table([(4, 100.0), (8, 40.0)], "bert")})["bert", WHY]
    assert s.verdict == "not testable"
    assert "E' 1.25" in s.text


def test_missing_samples_name_the_system_that_lacks_them() -> None:
    """Only the largest system lacks a samples-to-converge count: the reason names it, not
    its reference (which has one)."""
    frame = scores([("a", "H100", 4, 100.0), ("b", "H100", 16, 40.0)], workload="bert")
    frame = frame.assign(global_batch_size=8.0)
    frame.loc[frame["accelerators"] == 16, "samples_to_converge"] = float("nan")
    s = statements({"bert": scaling_table(frame, "bert")})["bert", WHY]
    assert s.verdict == "not testable"
    assert "the fastest system at 16" in s.text and "reference" not in reason(s.text)


def test_most_linear_names_what_is_missing_at_32_to_64() -> None:
    """RetinaNet with no system at 32-64: the reason says so with RetinaNet's counts; with
    RetinaNet there but no other workload there, it names the others."""
    lossy = table([(4, 100.0), (32, 25.0), (64, 15.0)], "bert")
    short = table([(4, 100.0), (8, 55.0), (16, 30.0)], "retinanet")
    s = statements({"bert": lossy, "retinanet": short})["retinanet", LINEAR]
    assert s.verdict == "not testable"
    assert "RetinaNet has no H100 system at 32-64" in s.text and "4, 8 and 16" in s.text
    alone = table([(4, 100.0), (32, 14.0)], "retinanet")
    s = statements({"bert": short.assign(workload="bert"), "retinanet": alone})
    assert s["retinanet", LINEAR].verdict == "not testable"
    assert "BERT" in s["retinanet", LINEAR].text
