"""A fully connected mesh's link (``xgmi-mi300x``) said as each count is priced: N devices
of a node reach (N-1)/7 of the 8-GPU figure (``Link.busbw_at``), so the Link line, the
assumption's value, range and ``at`` (``-f json``) and the readings at its range's ends give
the figure on each count of a node searched, not the node's whole 319 GB/s; a link of one
figure (NVLink, PCIe, MI250X) says that one, as before. The same link given by its name or
as a :class:`Link` prices the same."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.api import Advice
from gpuscale.advice.calibrate.link import choose_link
from gpuscale.advice.calibration import BenchHost
from gpuscale.advice.records import Assumption
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import Finding, FindingKind, TermId
from gpuscale.cli import app
from gpuscale.hardware.links import PRESETS
from gpuscale.interconnect.network import Link
from gpuscale.tables.refusals import FieldError

MI300X = PRESETS["xgmi-mi300x"]
WALK = {"params": 7e9, "step_ms": 500, "batch": 8}


def _assumed(advice: Advice) -> Assumption:
    (found,) = [a for a in advice.assumptions if a.term == TermId.LINK]
    return found


def _figures(found: Finding) -> list[tuple[int, float]]:
    return [(f["devices"], f["busbw_gbs"]) for f in found["at"]]  # type: ignore[union-attr]


def _at(*counts: int) -> list[tuple[int, float]]:
    return [(n, MI300X.busbw_at(n)) for n in counts]


@pytest.mark.parametrize(
    ("asked", "counts"),
    [({}, (2, 4, 8)), ({"max_devices": 4}, (2, 4)), ({"nodes": 2, "gpus_per_node": 4}, (2, 4))],
)
def test_the_assumed_mesh_says_each_count_of_a_node(asked: dict, counts: tuple[int, ...]) -> None:
    """At each count of a node searched (nodes of 4: 2 and 4 only); the value the figure at
    the most devices of a node. The board's own fabric has no range (no ends read); a bench
    host's mesh that measured no link (one GPU) has one, its high end that same figure."""
    advice = gpuscale.advise(device_name="MI300X", **WALK, **asked)
    link = _assumed(advice)
    assert list(link.quantity.at) == _at(*counts) == _figures(link.value)
    assert link.value["mesh"] == MI300X.mesh_links
    top = MI300X.busbw_at(counts[-1])
    assert (link.quantity.value, link.quantity.low, link.quantity.high) == (top, None, None)
    assert not [r for r in advice.decision.readings if r.term == "link"]
    host = BenchHost(Link.from_preset("xgmi-mi300x"), "MI300X", 1, 64, "cuda", 1, "MI300X")
    request = AdviceRequest(**WALK, **asked)
    per_node = asked.get("gpus_per_node") if "nodes" in asked else None
    most = asked.get("max_devices", 8)
    choice = choose_link(request, None, False, host, most, per_node)
    assert choice.assumption is not None and choice.assumption.quantity is not None
    ranged = choice.assumption.quantity
    assert (ranged.value, ranged.low, ranged.high) == (top, 10.0, top)
    assert {end: gbs for end, _, gbs in choice.ends} == {"low": 10.0, "high": top}


@pytest.mark.parametrize(
    ("device", "busbw_gbs", "high"), [("H100", 370.8, 370.8), ("MI250X", 72.0, None)]
)
def test_a_link_of_one_figure_says_that_one(device: str, busbw_gbs: float, high: float) -> None:
    """A name that may mean a PCIe card (``H100``) keeps the range up to the board's NVLink;
    an OAM module named (MI250X) has its fabric's figure alone."""
    link = _assumed(gpuscale.advise(device_name=device, **WALK))
    assert (link.quantity.value, link.quantity.high, link.quantity.at) == (busbw_gbs, high, ())
    assert (link.value["mesh"], link.value["at"]) == (None, ())


def test_the_json_gives_each_count() -> None:
    args = ["advise", "--params", "7B", "--step-ms", "500", "--batch", "8"]
    out = CliRunner().invoke(app, [*args, "--device-name", "MI300X", "-f", "json"]).output
    (link,) = [a for a in json.loads(out)["assumptions"] if a["kind"] == "link"]
    assert link["at"] == {str(n): pytest.approx(g) for n, g in _at(2, 4, 8)}
    assert (link["value"], link["low"], link["high"]) == (318.98, None, None)


def test_a_mesh_given_or_benched_says_each_count() -> None:
    """``--interconnect xgmi-mi300x``, and the bench host's recorded link."""
    advice = gpuscale.advise(link="xgmi-mi300x", **WALK)
    (given,) = [
        f
        for f in advice.calibration.said.sources
        if isinstance(f, Finding) and f.kind == FindingKind.LINK_PRESET
    ]
    assert _figures(given) == _at(2, 4, 8) and given["mesh"] == 7
    host = BenchHost(Link.from_preset("xgmi-mi300x"), "MI300X", 8, 64, "cuda", 1, "MI300X")
    choice = choose_link(AdviceRequest(**WALK), None, False, host, 8)
    assert choice.said is not None and choice.said.kind == FindingKind.LINK_OF_BENCH_HOST
    assert _figures(choice.said) == _at(2, 4, 8)


@pytest.mark.parametrize("preset", ["xgmi-mi300x", "nvlink4", "pcie4-x16"])
def test_a_preset_by_name_or_as_a_link_prices_the_same(preset: str) -> None:
    """``link=name`` and ``link=Link.from_preset(name)``: the same table (a mesh's 45.6
    GB/s at 2, not the 8-GPU figure; a preset's link class, not a custom link's)."""
    named = gpuscale.advise(link=preset, **WALK)
    given = gpuscale.advise(link=Link.from_preset(preset), **WALK)
    assert given.table.equals(named.table)
    assert given.calibration.machine.network.intra == Link.from_preset(preset)


def test_a_link_of_other_figures_is_custom_and_a_mesh_of_them_refused() -> None:
    """Figures no preset has: one figure at every count; with a mesh's links per device,
    which a request cannot carry, refused (never priced as another link)."""
    other = replace(Link.from_preset("nvlink4"), busbw_gbs=300.0)
    intra = gpuscale.advise(link=other, **WALK).calibration.machine.network.intra
    assert (intra.name, intra.busbw_gbs, intra.mesh_links) == ("custom", 300.0, None)
    with pytest.raises(FieldError) as refused:
        gpuscale.advise(link=replace(Link.from_preset("xgmi-mi300x"), busbw_gbs=300.0), **WALK)
    assert refused.value.field == "link"
