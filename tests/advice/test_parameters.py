"""The parameters as data (issue 71 item 3): each link preset (``data/links.json``) and each
advice prior (``data/advice_priors.json``) pinned here, so that a value changed in its data
file fails a test until its expected value here changes too; and every value carries a
unit and a source."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import pytest

from gpuscale.advice.model.network import CLASSES, link_class
from gpuscale.advice.model.priors import PRIORS, assumed_overlap
from gpuscale.hardware.links import INFINITY_FABRIC, NVLINK, PRESETS

ROOT = Path(__file__).resolve().parents[2]
DATA = resources.files("gpuscale") / "data"
LINKS = json.loads((DATA / "links.json").read_text())
PRIOR_FILE = json.loads((DATA / "advice_priors.json").read_text())

# name: (bus bandwidth GB/s, latency per ring hop us, line rate GB/s per direction, kind)
EXPECTED_PRESETS = {
    "nvlink5": (720.0, 10.0, 900.0, "gpu"),
    "nvlink4": (370.8, 10.0, 450.0, "gpu"),
    "nvlink3": (240.0, 10.0, 300.0, "gpu"),
    "nvlink3-bridge": (48.0, 12.0, 56.24, "gpu"),
    "nvlink2": (120.0, 12.0, 150.0, "gpu"),
    "xgmi-mi300x": (318.98, 10.0, 448.0, "gpu"),
    "xgmi-mi250x": (72.0, 10.0, 400.0, "gpu"),
    "pcie5-x16": (48.0, 15.0, 63.008, "gpu"),
    "pcie4-x16": (24.0, 15.0, 31.504, "gpu"),
    "pcie3-x16": (12.0, 15.0, 15.76, "gpu"),
    "pcie-phb": (10.0, 20.0, 31.504, "gpu"),
    "pcie-sys": (10.0, 25.0, None, "gpu"),
    "ib-ndr400": (48.0, 6.0, 50.0, "network"),
    "ib-hdr200": (24.0, 6.0, 25.0, "network"),
    "eth100": (12.0, 30.0, 12.5, "network"),
    "eth25": (3.0, 50.0, 3.125, "network"),
}
# generation: (line rate per link GB/s, NCCL's GB/s per link, links per GPU)
EXPECTED_NVLINK = {
    "nvlink2": (25.0, 20.0, 6),
    "nvlink3": (25.0, 20.0, 12),
    "nvlink3-bridge": (14.06, 12.0, 4),
    "nvlink4": (25.0, 20.6, 18),
    "nvlink5": (50.0, 40.0, 18),
}
# generation: (line rate per link GB/s, RCCL's GB/s per link, links per GPU, catalogue's
# architecture)
EXPECTED_INFINITY_FABRIC = {
    "xgmi-mi300x": (64.0, 48.0, 7, "CDNA 3"),
    "xgmi-mi250x": (50.0, 36.0, 8, "CDNA 2"),
}
# preset: the link class it is assumed to be of (no published row judged on it)
EXPECTED_ASSUMED_CLASS = {"xgmi-mi300x": "nvlink", "xgmi-mi250x": "nvlink"}
# name: (point, low, high, unit's first word)
EXPECTED_PRIORS = {
    "gpu_fixed_cost": (4.0, 1.0, 20.0, "ms"),
    "ddp_work": (0.4247, 0.1433, 4.036, "ms"),
    "step_spread": (0.134, 0.06, 0.3102, "share"),
    "step_error_extrapolated": (1.35, None, None, "factor"),
    "step_error_rest": (1.10, None, None, "factor"),
    "overlap": (1.0, None, None, "share"),
    "ddp_copies": (4.0, None, None, "bytes"),
    "reference_memory_gbs": (3350.0, None, None, "GB/s"),
    "custom_link_latency_us": (10.0, None, None, "us"),
}
# link class: the overlap assumed where nothing measured it (advice_priors.json overlap)
EXPECTED_OVERLAP_BY_CLASS = {"nvlink": 1.0, "pcie_p2p": 1.0, "pcie_no_p2p": 0.5, "multinode": 1.0}


def test_every_preset_is_pinned() -> None:
    found = {
        p.name: (p.busbw_gbs, p.hop_latency_us, p.line_rate_gbs, p.kind) for p in PRESETS.values()
    }
    assert found == EXPECTED_PRESETS


def test_every_nvlink_generation_is_pinned() -> None:
    found = {g: (n.line_rate_gbs, n.nccl_gbs, n.links_per_gpu) for g, n in NVLINK.items()}
    assert found == EXPECTED_NVLINK


def test_every_infinity_fabric_generation_is_pinned() -> None:
    found = {
        g: (f.line_rate_gbs, f.rccl_gbs, f.links_per_gpu, f.catalogue_architecture)
        for g, f in INFINITY_FABRIC.items()
    }
    assert found == EXPECTED_INFINITY_FABRIC


def test_every_assumed_link_class_is_pinned_and_a_class() -> None:
    """A preset whose name says no class of the published fits (an xGMI mesh) is taken as
    one of them, and its data say why and that no published row judged it."""
    found = {p.name: p.assumed_class for p in PRESETS.values() if p.assumed_class is not None}
    assert found == EXPECTED_ASSUMED_CLASS
    assert set(found.values()) <= set(CLASSES)
    for name in found:
        said = LINKS["presets"][name]["link_class"]
        assert _sourced(said) and "no published row" in said["note"], name


def test_every_prior_is_pinned() -> None:
    found = {n: (p.point, p.low, p.high, p.unit.split()[0]) for n, p in PRIORS.items()}
    assert found == EXPECTED_PRIORS


def test_the_overlap_per_link_class_is_pinned() -> None:
    """DDP's pipeline (1) where gradients go device to device, half through host memory;
    a link of no class (custom or measured) the prior's point."""
    assert {cls: assumed_overlap(cls) for cls in CLASSES} == EXPECTED_OVERLAP_BY_CLASS
    assert assumed_overlap(None) == PRIORS["overlap"].point == 1.0


def _sourced(entry: dict) -> bool:
    return bool(str(entry.get("source") or "").strip()) and bool(str(entry.get("unit") or ""))


@pytest.mark.parametrize("name", sorted(LINKS["presets"]))
def test_every_preset_value_has_a_unit_and_a_source(name: str) -> None:
    preset = LINKS["presets"][name]
    for field in ("busbw_gbs", "hop_latency_us", "line_rate_gbs"):
        assert _sourced(preset[field]), f"{name}.{field}"


def test_every_link_figure_has_a_unit_and_a_source() -> None:
    figures = [
        *(g[f] for g in LINKS["nvlink"].values() for f in ("line_rate_gbs", "nccl_gbs")),
        *(g["links_per_gpu"] for g in LINKS["nvlink"].values()),
        *(g[f] for g in LINKS["infinity_fabric"].values() for f in ("line_rate_gbs", "rccl_gbs")),
        *(g["links_per_gpu"] for g in LINKS["infinity_fabric"].values()),
        *(LINKS[k] for k in ("pcie_lane_gbs", "nccl_pci_gen3_x16_gbs", "shm_typical_gbs")),
        *(LINKS[k] for k in ("cross_socket_gbs", "nccl_net_gbs_per_100gbit")),
    ]
    assert figures and all(_sourced(f) for f in figures)


def test_every_hop_latency_says_how_far_it_is_from_nccl() -> None:
    """No preset's latency is NCCL's own figure: each says by how much it differs."""
    for name, preset in LINKS["presets"].items():
        note = preset["hop_latency_us"].get("note", "")
        assert "NCCL" in note and "us" in note, name


@pytest.mark.parametrize("name", sorted(PRIOR_FILE["priors"]))
def test_every_prior_has_a_unit_and_a_source(name: str) -> None:
    prior = PRIOR_FILE["priors"][name]
    assert _sourced(prior)
    assert (prior["low"] is None) == (prior["high"] is None)
    if prior["low"] is not None:
        assert prior["low"] <= prior["point"] <= prior["high"]


def test_the_nvlink_presets_agree_with_their_generations() -> None:
    """The data file says each NVLink figure twice (the generation, the preset): they agree."""
    for generation, g in NVLINK.items():
        preset = PRESETS[generation]
        assert preset.busbw_gbs == g.links_per_gpu * g.nccl_gbs
        assert preset.line_rate_gbs == g.links_per_gpu * g.line_rate_gbs


def test_the_package_ships_the_data_files() -> None:
    """pyproject.toml's package data takes the data folder's JSON files (links.json,
    advice_priors.json): an installed gpuscale reads them."""
    lines = (ROOT / "pyproject.toml").read_text().splitlines()
    shipped = next(line for line in lines if line.startswith("gpuscale = ["))
    assert '"data/*.json"' in shipped


def test_the_xgmi_presets_agree_with_their_generations() -> None:
    """The line rate of an xGMI preset is its links times their rate; MI300X's bus bandwidth
    is AMD's rccl-tests measurement, within 6% under RCCL's model of its 7 links (the data's
    note: 336 GB/s); MI250X's is RCCL's model at the double link between modules."""
    for generation, g in INFINITY_FABRIC.items():
        assert PRESETS[generation].line_rate_gbs == g.links_per_gpu * g.line_rate_gbs
    mi300x = INFINITY_FABRIC["xgmi-mi300x"]
    model_gbs = mi300x.links_per_gpu * mi300x.rccl_gbs
    assert 0.94 * model_gbs < PRESETS["xgmi-mi300x"].busbw_gbs < model_gbs
    assert PRESETS["xgmi-mi250x"].busbw_gbs == 2 * INFINITY_FABRIC["xgmi-mi250x"].rccl_gbs


def test_the_docs_list_every_preset_with_its_figures() -> None:
    """docs/interconnect.md's table of link presets holds every preset with its figures
    and link class as the data give them (an xGMI mesh's class said assumed)."""
    page = (ROOT / "docs" / "interconnect.md").read_text()
    rows = re.findall(
        r"^\| `([a-z0-9-]+)` \| ([^|]+) \| ([^|]+) \| ([^|]+) \| ([^|]+) \|$", page, re.M
    )
    listed = {name: tuple(cell.strip() for cell in cells) for name, *cells in rows}
    expected = {}
    for p in PRESETS.values():
        line_rate = "-" if p.line_rate_gbs is None else f"{p.line_rate_gbs:g}"
        cls = "multinode" if p.kind == "network" else link_class(p.name, nodes=False)
        said = f"{cls} (assumed)" if p.assumed_class else str(cls)
        expected[p.name] = (f"{p.busbw_gbs:g}", f"{p.hop_latency_us:g}", line_rate, said)
    assert listed == expected
