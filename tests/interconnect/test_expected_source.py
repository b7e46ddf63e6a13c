"""The bus bandwidth ``topo`` expects of a ring comes with what it is made of and the
citation of each figure in ``data/links.json`` (``expected_source``), and a PCIe ring's
generation is the named part's where the saved matrix holds none (``--gpu``)."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.interconnect.expected import expected_busbw
from gpuscale.interconnect.topology import parse_topo_matrix

from .test_topology_text import A100_8, DUAL_SOCKET, H100_8, PHB_PAIR

_DATA = json.loads((resources.files("gpuscale") / "data" / "links.json").read_text())
PIX_PAIR = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPIX\t0-31\nGPU1\tPIX\t X \t0-31\n"


@pytest.mark.parametrize(
    "text, expected, cited",
    [
        (H100_8, 18 * 20.6, _DATA["nvlink"]["nvlink4"]["nccl_gbs"]["source"]),
        (A100_8, 12 * 20.0, _DATA["nvlink"]["nvlink3"]["nccl_gbs"]["source"]),
        (PHB_PAIR, 10.0, _DATA["shm_typical_gbs"]["source"]),
        (DUAL_SOCKET, 10.0, _DATA["presets"]["pcie-sys"]["busbw_gbs"]["source"]),
        (PIX_PAIR, 24.0, _DATA["nccl_pci_gen3_x16_gbs"]["source"]),
    ],
)
def test_every_expected_figure_names_its_source(
    tmp_path: Path, text: str, expected: float, cited: str
) -> None:
    path = tmp_path / "saved topo.txt"
    path.write_text(text)
    result = CliRunner().invoke(app, ["topo", "--file", str(path), "-f", "json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert info["expected_busbw_gbs"] == pytest.approx(expected)
    assert cited in info["expected_source"]
    first = CliRunner().invoke(app, ["topo", "--file", str(path)]).stdout.splitlines()[0]
    assert cited in first  # the table's verdict line cites it too


def test_nvlink_source_says_the_links_and_the_per_link_figure() -> None:
    topo = parse_topo_matrix(H100_8)
    assert topo.expected_source().startswith("18 NVLinks x 20.6 GB/s")


def test_no_figure_no_source() -> None:
    cut = H100_8.split("\nGPU1\t", 1)[0] + "\nGPU1\t\n"  # GPU1's NVLinks unknown
    topo = parse_topo_matrix(cut)
    assert (topo.expected_busbw_gbs(), topo.expected_source()) == (None, None)


@pytest.mark.parametrize(
    "gpu, preset, expected, whose",
    [
        (None, "pcie4-x16", 24.0, "assumed"),
        ("V100 PCIe", "pcie3-x16", 12.0, "V100 PCIe 16GB's, from the catalogue"),
        ("H100 PCIe", "pcie5-x16", 48.0, "H100 PCIe 80GB's, from the catalogue"),
        ("L40S", "pcie4-x16", 24.0, "L40S's, from the catalogue"),
    ],
)
def test_a_saved_pcie_pair_takes_the_named_parts_generation(
    gpu: str | None, preset: str, expected: float, whose: str
) -> None:
    """A saved matrix holds no PCIe generation: two V100 PCIe behind one switch are Gen3,
    NCCL's 12 GB/s, not the Gen4 24 a healthy pair would be judged low against."""
    topo = parse_topo_matrix(PIX_PAIR, gpu)
    assert (topo.preset(), topo.expected_busbw_gbs()) == (preset, expected)
    assert whose in topo.expected_source()
    header = {"device": "cuda", "ranks": 2, "nodes": 1}
    assert expected_busbw(header, topo, None, 2, None)[0] == expected  # the verdict's figure
