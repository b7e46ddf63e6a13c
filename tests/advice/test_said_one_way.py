"""A new user's walk (round c14): the same thing written two ways. The fixed cost's range
was "2 ms (1 ms-2 ms)" in ``-f json``'s ``said`` and "2 ms (range 1 ms-2 ms)" in
``--explain``; "To settle it:" dropped the backticks and ``--batch B`` that the fixed
cost's own measurement keeps; a link given by its numbers was titled "on custom"."""

from __future__ import annotations

import json
import re

from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.calibrate.link import LINK_ENDS
from gpuscale.advice.explain.answer import (
    change_line,
    deciding_line,
    issued,
    moved_by,
    readings_apart,
)
from gpuscale.advice.explain.document import advice_view
from gpuscale.advice.explain.phrasebook import WITHHELD as WITHHELD_WORDS
from gpuscale.advice.explain.phrasebook import (
    measured,
    said,
    spelled_as,
    withheld_words,
)
from gpuscale.advice.model.priors import strategy_name
from gpuscale.advice.types import Source, TermId
from gpuscale.cli import app
from gpuscale.interconnect.network import Link
from gpuscale.quantities import format_ms_span, number

from ..golden import Golden

# by numbers, one step time: the fixed cost assumed, its range moving the count
WITHHELD = {"params": 7e6, "step_ms": 2, "batch": 64, "global_batch": 1000}
# a step a little shorter: the assumed link's range moves the count too
LINK_MOVES = {**WITHHELD, "step_ms": 1.95}


def test_the_fixed_cost_and_its_range_are_written_as_json_says_them() -> None:
    advice = gpuscale.advise(**WITHHELD)
    fixed = next(a for a in advice.assumptions if a.term == TermId.FIXED)
    q = fixed.quantity
    assert q is not None and q.low is not None and q.high is not None and q.low < q.high
    span = format_ms_span(q.low, q.high)  # the unit once: 1.00-2.00 ms
    text = "\n".join(advice.explanation)
    written = re.findall(rf"(\S+ \S+ \((?:\w+ )?){re.escape(span)}\)", text)
    assert written  # the premise: --explain writes the range
    assert {w + span + ")" for w in written} == {said(fixed.value)}


def test_to_settle_it_gives_the_fixed_cost_measurement_as_the_assumption_does() -> None:
    advice = gpuscale.advise(**WITHHELD, link="pcie-phb")  # the link given: none but it moves
    assert moved_by(advice.decision) == ["fixed_cost"]  # the premise
    fixed = next(a for a in advice.assumptions if a.term == TermId.FIXED)
    with spelled_as(advice.keywords):  # both as the Python reader names the fields
        assert measured(fixed.measure, short=True) in change_line(advice)


def test_a_custom_link_is_titled_by_its_numbers() -> None:
    advice = gpuscale.advise(params=7e6, step_ms=2, batch=64, busbw_gbs=50, max_devices=8)
    link = advice.calibration.machine.network.intra
    assert link.name == "custom"  # the premise: the link's name says nothing of it
    title = advice_view(advice, terminal=True).title
    assert f"{number(link.busbw_gbs)} GB/s" in title and f"{number(link.latency_us)} us" in title
    assert not title.endswith(link.name)


# hybrid sharding over two nodes of 8: the focus, 8 devices, is one node
HYBRID = {
    **{"params": 7e9, "step_ms": 900, "batch": 8192, "device_name": "H100", "link": "nvlink4"},
    **{"nodes": 2, "inter_node": "ib-ndr400"},
}


def test_hybrid_within_one_node_is_worded_as_the_fsdp_it_issues() -> None:
    """Within one node hybrid sharding issues FSDP's collectives only (docs/memory.md): the
    answer said "the shards' all-reduce across nodes ... at 8 devices", one node."""
    hybrid = gpuscale.advise(**HYBRID, strategy="hybrid")
    fsdp = gpuscale.advise(**HYBRID, strategy="fsdp")
    d = hybrid.decision
    network = hybrid.calibration.machine.network
    assert not network.spans_nodes(d.focus.accelerators)  # the premise: the focus is one node
    assert d.focus == fsdp.decision.focus and d.limit == fsdp.decision.limit  # the same numbers
    assert issued(hybrid.calibration, d.focus.accelerators) == "fsdp"
    assert issued(hybrid.calibration) == "hybrid"  # 16 devices span the nodes
    assert deciding_line(hybrid) == deciding_line(fsdp)
    assert change_line(hybrid) == change_line(fsdp)


def test_the_overlap_assumed_is_the_pipeline_of_the_strategy_advised() -> None:
    """--explain's Overlap line said "DDP's pipeline" under every strategy."""
    one_node = {k: v for k, v in HYBRID.items() if k not in ("nodes", "inter_node")}

    def basis(**asked: object) -> str:
        advice = gpuscale.advise(**asked)
        overlap = next(a for a in advice.assumptions if a.term == TermId.OVERLAP)
        assert overlap.source is Source.ASSUMED  # the premise: the prior's
        return said(overlap.basis)

    ddp = basis(**{**one_node, "params": 7e6, "batch": 64, "step_ms": 2})
    fsdp, hybrid_one_node = basis(**one_node, strategy="fsdp"), basis(**one_node, strategy="hybrid")
    hybrid_two_nodes = basis(**HYBRID, strategy="hybrid")
    assert fsdp == hybrid_one_node
    assert len({ddp, fsdp, hybrid_two_nodes}) == 3
    names = [strategy_name(s) for s in ("ddp", "fsdp", "hybrid")]
    assert [n in b for n, b in zip(names, (ddp, fsdp, hybrid_two_nodes), strict=True)] == [True] * 3


def test_a_link_reading_names_its_preset_and_every_term_moving_the_count_is_said() -> None:
    """The assumed pcie-phb (10 GB/s) advised 4 devices; its range's low end, pcie-sys, is
    10 GB/s too at a longer latency and advised 2: the reading said only "10 GB/s", the
    answer left it out as no alternative and said the fixed cost alone decides."""
    advice = gpuscale.advise(**LINK_MOVES)
    d, link = advice.decision, advice.calibration.machine.network.intra
    ends = {r.end: r for r in d.readings if r.term == "link"}
    for end, preset in LINK_ENDS:
        assert ends[end].preset == preset
        assert ends[end].latency_us == Link.from_preset(preset).latency_us
    low = ends["low"]
    assert low.value == link.busbw_gbs and low.latency_us != link.latency_us  # the premise
    assert low.accelerators != d.chosen.accelerators  # it moves the count
    assert moved_by(d) == ["fixed_cost", "link"] and d.withheld_by == "fixed_cost"
    assert low in readings_apart(advice)
    document = advice_view(advice, terminal=False, document=True).document
    assert document is not None
    assert document["recommendation"]["moved_by"] == ["fixed_cost", "link"]
    said = {r["preset"]: r["latency_us"] for r in document["decision"]["readings"]}
    assert said[low.preset] == low.latency_us
    with spelled_as(advice.keywords):  # the words as the advice's reader spells them
        decides, settle = deciding_line(advice), change_line(advice)
        words = {t: (withheld_words(t, "short"), withheld_words(t, "settle")) for t in moved_by(d)}
    for term, (short, whole) in words.items():  # each named, how to settle it (--explain: whole)
        assert WITHHELD_WORDS[term]["name"] in decides
        assert short.removeprefix("give ") in settle  # several: one verb, give --a and --b
        assert any(whole in line for line in advice.caveats)


def test_the_python_reader_is_named_the_keywords_alone() -> None:
    """Each field the advice names is spelled once, as its reader gives it: no option of
    the command line in Python's words (a command to run, in backticks, is one), no
    "(in Python: ...)" beside one."""
    advice = gpuscale.advise(params=7e6, step_ms=40, batch=32, device_name="A10", link="pcie-phb")
    words = " ".join([*advice.explanation, *advice.decision.warnings])
    outside = re.sub(r"`gpuscale [^`]*`", "", words)
    assert "step_ms=T, batch=B" in words and "flops_per_sample=" in words
    assert not re.findall(r"--(?:step-ms|batch|flops-per-sample|allow-flagged)\b", outside)
    assert "in Python" not in words
    with spelled_as(False):  # the command line's, the same sentence
        assert "--step-ms T --batch B" in measured(advice.calibration.model.fixed.measure)


def test_an_option_spelt_unlike_its_field_is_named_as_each_reader_gives_it() -> None:
    """The price is the field ``price_per_device_hour`` (plan's too) and the option
    ``--price``: Python's words name the keyword, the command line's the option, never the
    other's spelling (``price=`` is no keyword; ``--price-per-device-hour`` no option)."""
    advice = gpuscale.advise(params=7e6, step_ms=2, batch=64, link="pcie-phb", **PRICE)
    python_words = " ".join(advice.explanation)
    assert "price_per_device_hour=" in python_words
    assert not re.search(r"\bprice=|--price", python_words)
    shell = CliRunner().invoke(app, ["advise", *ARGS, "--price", "2.5", "-f", "json"])
    assert shell.exit_code == 0, shell.output
    cli_words = json.loads(shell.output)
    said = json.dumps([cli_words["explanation"], cli_words["cost_unit"]])
    assert "--price" in said and "price_per_device_hour" not in said
    assert "--price-per-device-hour" not in said


PRICE = {"price_per_device_hour": 2.5}
ARGS = ["--params", "7M", "--step-ms", "2", "--batch", "64", "--interconnect", "pcie-phb"]


# a 7B model on H100s, priced: its cheapest count said, and the cost's unit
PRICED = ["--params", "7e9", "--step-ms", "900", "--batch", "4", "--global-batch", "64"]
PRICED += ["--device-name", "H100", "--price", "2.5"]


def test_the_advice_names_accelerator_hours_as_its_table_and_the_report_do(
    golden: Golden,
) -> None:
    """The advice said "Fewest device-hours" (--explain) and "per device-hour x
    device-hours" (-f json's cost_unit) beside a table (and a report, and `gpuscale plan`)
    whose column is accelerator hours: one word for one quantity. The price's option keeps
    its name (--price-per-device-hour)."""
    runs = [CliRunner().invoke(app, ["advise", *PRICED, *view]) for view in (["--explain"], [])]
    runs.append(CliRunner().invoke(app, ["advise", *PRICED, "-f", "json"]))
    assert all(run.exit_code == 0 for run in runs), [run.output for run in runs]
    explained, document = " ".join(runs[0].output.split()), json.loads(runs[2].output)
    (fewest,) = [s for s in document["explanation"] if s.startswith("Fewest")]
    golden.check("advice/accelerator_hours", "fewest, --explain", fewest)
    golden.check("advice/accelerator_hours", "cost unit, -f json", document["cost_unit"])
    assert fewest in explained
    assert "accelerator_hours" in document["predictions"][0]
    for text in (explained, runs[1].output, runs[2].output):
        unnamed = re.sub(r"(--)?price[-_]per[-_]device[-_]hour", "", text)
        assert not re.search(r"device[-_ ]hours?", unnamed), text
