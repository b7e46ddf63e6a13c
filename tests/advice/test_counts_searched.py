"""A count asked for is shown, or said not to be and why (a walk: ``--max-devices 3``
showed N = 1 and 2 and dropped 3 without a note: batch 64 does not split over 3)."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app

from ..golden import Golden
from .lines import lines_on

VIEW = "advice/counts_searched"
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


# A model that still pays at every count (1B parameters, its fixed cost measured).
PAYS = {"params": 1e9, "step_ms": (500.0, 300.0), "batch": (64, 32), "link": "nvlink4"}


def _searched_line(said: str) -> list[int] | None:
    line = re.search(r"Device counts searched: ([\d, ]+)[;.]", said)
    return [int(x) for x in line.group(1).split(", ")] if line else None


@pytest.mark.parametrize("most", [2, 3, 4, 5, 6, 8, 12, 20])
@pytest.mark.parametrize("batch", [None, 256, 384])
def test_the_counts_searched_are_said_wherever_they_are_not_every_count(
    most: int, batch: int | None, golden: Golden
) -> None:
    """Whenever the counts searched are not 1..max (powers of two and the most allowed;
    past one node whole nodes only), the advice names them and the rule; a walk's
    --max-devices 12 --global-batch 384 searched 1, 2, 4 and 8 without a word."""
    scaling = {"global_batch": batch} if batch else {"scaling": "weak"}
    advice = gpuscale.advise(**PAYS, max_devices=most, **scaling)
    searched = advice.calibration.machine.device_counts
    line = [s for s in advice.explanation if s.startswith("Device counts")]
    if searched == list(range(1, most + 1)) and set(advice.predictions["accelerators"]) == set(
        searched
    ):
        assert line == []
        return
    assert len(line) == 1 and _searched_line(line[0]) == searched, line
    case = f"at most {most}, " + (f"global batch {batch}" if batch else "weak scaling")
    golden.check(VIEW, case, line[0])
    if most == 12:  # 12 is one and a half nodes of 8: not searched, and said why
        assert searched == [1, 2, 4, 8] and "not 12" in line[0]
        nodes = lines_on(advice.explanation, "Nodes:")
        assert "above 8" in nodes and "span up to" not in nodes
        golden.check(VIEW, f"{case}: the nodes", nodes)


@pytest.mark.parametrize("most", [3, 5, 6, 12])
@pytest.mark.parametrize("batch", [256, 384, None])
def test_the_most_allowed_is_said_only_of_the_most_allowed(
    most: int, batch: int | None, golden: Golden
) -> None:
    """ "N devices is the most allowed" only where N is; below it (a count the batch does
    not split, or not searched), the largest count predicted is said to be that, with why
    nothing larger was, and the remedy is what would predict one (a walk: --max-devices 3
    said "2 devices is the most allowed")."""
    scaling = {"global_batch": batch} if batch else {"scaling": "weak"}
    advice = gpuscale.advise(**PAYS, max_devices=most, **scaling)
    said = " ".join(advice.explanation)
    for n in re.findall(r"(\d+) devices is the most allowed", said):
        assert int(n) == most, said
    d = advice.decision
    if d.limit.cap == "devices" and d.focus.accelerators < most:
        cap = lines_on(advice.explanation, f"{d.focus.accelerators} devices is the")
        assert "largest" in cap and f"{most} are allowed" in cap
        # the remedy is what would predict a larger count: more are allowed already
        remedy = lines_on(advice.explanation, "What would change it")
        assert f"above {d.focus.accelerators}" in remedy and "allow more (" not in remedy
        case = f"at most {most}, " + (f"global batch {batch}" if batch else "weak scaling")
        golden.check(VIEW, f"{case}: the largest count predicted", f"{cap}\n{remedy}")


def test_the_walk_max_3_at_a_batch_3_does_not_divide(golden: Golden) -> None:
    advice = gpuscale.advise(**PAYS, max_devices=3, global_batch=256)
    # the search stopped at 2 because 256 does not split over 3, not at the most allowed
    assert advice.recommended == 2 and advice.decision.limit.cap == "batch"
    assert advice.calibration.machine.device_counts == [1, 2, 3]
    assert list(advice.predictions["accelerators"]) == [1, 2]
    cap = lines_on(advice.explanation, "2 devices is the")
    remedy = lines_on(advice.explanation, "What would change it")
    assert "most allowed" not in cap and "divisible by 3" in remedy
    golden.check(VIEW, "the walk: at most 3, global batch 256", f"{cap}\n{remedy}")


def test_counts_searched_and_dropped_are_said_in_the_default_view() -> None:
    """Strong scaling over 4 nodes of 8 keeps global batch 8: 16 and 32 are searched and
    have no row; the default view (the answer's lines, and JSON's ``answer``) names them
    and why in one short line, not only --explain."""
    from gpuscale.advice.explain.answer import lines

    advice = gpuscale.advise(
        params=1.3e9, step_ms=200.0, batch=8, nodes=4, gpus_per_node=8, strategy="fsdp"
    )
    assert advice.calibration.machine.device_counts == [1, 2, 4, 8, 16, 32]
    assert set(advice.predictions["accelerators"]) == {1, 2, 4, 8}
    said = [line for line in lines(advice) if "16" in line and "32" in line]
    assert len(said) == 1, lines(advice)
    (line,) = said
    assert "not shown" in line and "global batch 8" in line and len(line.split()) <= 30
    # a search whose every count has its row says nothing of it
    whole = gpuscale.advise(
        params=1.3e9, step_ms=200.0, batch=32, nodes=4, gpus_per_node=8, strategy="fsdp"
    )
    assert not [line for line in lines(whole) if "not shown" in line]


def test_the_counts_not_shown_are_written_as_counts_never_with_an_exponent() -> None:
    """``--max-devices 1000000`` said "... 524288 and 1e+06 devices: the global batch 64
    does not split over them": each count is written whole, with thousands separators."""
    argv = ["advise", "--params", "7M", "--step-ms", "2", "--batch", "64"]
    result = CliRunner().invoke(app, [*argv, "--max-devices", "1000000", "-f", "json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)["answer"]
    line = next(s for s in answer if s.startswith("Also searched, not shown: "))
    listed = re.match(r"Also searched, not shown: (.+?) devices: ", line)[1]
    counts = [c for part in listed.split(" and ") for c in part.split(", ")]
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", c) for c in counts), counts
    assert [int(c.replace(",", "")) for c in counts] == [2**k for k in range(7, 20)] + [10**6]


@pytest.mark.parametrize(
    ("per_node", "nodes", "searched"),
    [
        (6, 8, [1, 2, 4, 6, 12, 24, 48]),  # Summit's nodes of 6 V100s
        (3, 2, [1, 2, 3, 6]),
        (6, 3, [1, 2, 4, 6, 12, 18]),  # the most whole nodes within the 18 allowed
        (8, 4, [1, 2, 4, 8, 16, 32]),  # nodes of a power of two: the powers of two
        (1, 8, [1, 2, 4, 8]),
    ],
)
def test_nodes_of_any_size_search_the_whole_node_and_its_doublings(
    per_node: int, nodes: int, searched: list[int]
) -> None:
    """Past one node only whole nodes are searched: one node, its doublings and the most
    whole nodes allowed, so nodes of 6 search 6, 12 and 24 (no power of two of devices is
    a whole node of 6) and 3 nodes' 18."""
    advice = gpuscale.advise(
        params=1e9, step_ms=300.0, batch=96, strategy="fsdp", device_name="V100",
        gpus_per_node=per_node, nodes=nodes, inter_node="ib-hdr200", link="nvlink2",
    )  # fmt: skip
    assert advice.calibration.machine.device_counts == searched
    # each has its row where the global batch 96 splits over it (18 does not)
    assert list(advice.predictions["accelerators"]) == [n for n in searched if 96 % n == 0]
