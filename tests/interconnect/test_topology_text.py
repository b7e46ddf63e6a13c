"""Saved ``nvidia-smi topo -m`` texts: the matrix, NIC rows, affinity columns, NVLink
generation from the bundles or the GPU's name, and the expected bandwidth."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app
from gpuscale.interconnect.topology import parse_topo_matrix

PHB_PAIR = """\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tPHB\t0-15\t0\t\tN/A
GPU1\tPHB\t X \t0-15\t0\t\tN/A

Legend:

  X    = Self
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
"""

H100_8 = (
    "\t"
    + "\t".join(f"GPU{i}" for i in range(8))
    + "\tNIC0\tNIC1\tCPU Affinity\tNUMA Affinity\n"
    + "".join(
        f"GPU{i}\t"
        + "\t".join(" X " if i == j else "NV18" for j in range(8))
        + ("\tPIX\tSYS" if i < 4 else "\tSYS\tPIX")
        + ("\t0-55,112-167\t0\n" if i < 4 else "\t56-111,168-223\t1\n")
        for i in range(8)
    )
    + "NIC0\t"
    + "\t".join(["PIX"] * 4 + ["SYS"] * 4)
    + "\t X \tSYS\n"
    + "NIC1\t"
    + "\t".join(["SYS"] * 4 + ["PIX"] * 4)
    + "\tSYS\t X \n"
    + "\nNIC Legend:\n\n  NIC0: mlx5_0\n  NIC1: mlx5_1\n"
)

A100_8 = (
    "\t"
    + "\t".join(f"GPU{i}" for i in range(8))
    + "\tCPU Affinity\n"
    + "".join(
        f"GPU{i}\t" + "\t".join(" X " if i == j else "NV12" for j in range(8)) + "\t0-63\n"
        for i in range(8)
    )
)

DUAL_SOCKET = """\x1b[4m\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\x1b[0m
GPU0\t X \tPIX\tSYS\tSYS\t0-23
GPU1\tPIX\t X \tSYS\tSYS\t0-23
GPU2\tSYS\tSYS\t X \tPIX\t24-47
GPU3\tSYS\tSYS\tPIX\t X \t24-47
"""

BRIDGE = """\tGPU0\tGPU1\tCPU Affinity
GPU0\t X \tNV4\t0-31
GPU1\tNV4\t X \t0-31
"""
NV4_PAIR_ON_PHB = """\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity
GPU0\tX\tPHB\tNV4\tPHB\t0-31
GPU1\tPHB\tX\tPHB\tPHB\t0-31
GPU2\tNV4\tPHB\tX\tPHB\t0-31
GPU3\tPHB\tPHB\tPHB\tX\t0-31
"""


@pytest.mark.parametrize(
    "text, gpu, n, slowest, preset, expected",
    [
        (PHB_PAIR, None, 2, "PHB", "pcie-phb", 10.0),
        (H100_8, None, 8, "NV", "nvlink4", 18 * 20.6),
        (A100_8, None, 8, "NV", "nvlink3", 12 * 20.0),
        (DUAL_SOCKET, None, 4, "SYS", "pcie-sys", 10.0),
        (BRIDGE, None, 2, "NV", "nvlink3-bridge", 4 * 12.0),
        (BRIDGE, "NVIDIA GeForce RTX 3090", 2, "NV", "nvlink3-bridge", 48.0),
    ],
)
def test_saved_texts(text, gpu, n, slowest, preset, expected) -> None:
    topo = parse_topo_matrix(text, gpu)
    assert len(topo.gpus) == n and topo.slowest_link() == slowest
    assert topo.preset() == preset
    assert topo.expected_busbw_gbs() == pytest.approx(expected)
    assert all(topo.matrix()[i][i] == "X" for i in range(n))


def test_nic_rows_legend_and_affinity_are_kept() -> None:
    topo = parse_topo_matrix(H100_8)
    assert topo.nvswitch and topo.nvlinks_per_gpu() == 18
    assert [(n.name, n.device) for n in topo.nics] == [("NIC0", "mlx5_0"), ("NIC1", "mlx5_1")]
    assert topo.nics[0].to_gpus == ("PIX",) * 4 + ("SYS",) * 4
    assert topo.gpus[5].cpu_affinity == "56-111,168-223" and topo.gpus[5].numa_node == "1"
    info = topo.to_dict()
    assert info["preset"] == "nvlink4" and info["expected_busbw_gbs"] == pytest.approx(370.8)


def test_an_unknown_bundle_asks_for_the_gpu() -> None:
    odd = BRIDGE.replace("NV4", "NV2")
    assert parse_topo_matrix(odd).expected_busbw_gbs() is None
    assert parse_topo_matrix(odd, "Tesla V100-SXM2").expected_busbw_gbs() == 2 * 20.0


def test_topology_rejects_other_text() -> None:
    with pytest.raises(ValueError):
        parse_topo_matrix("No devices were found")


@pytest.mark.parametrize("text", ["garbage\n", "\tGPU0\tGPU1\n"])
def test_a_text_holding_no_matrix_is_told_how_to_save_one(tmp_path, text: str) -> None:
    """A file holding no GPU matrix (no header; a header with no rows) is refused saying
    what to save and the command that saves it, not only what is missing."""
    from gpuscale.interconnect.topology import read_topo_file

    saved = tmp_path / "my topo.txt"
    saved.write_text(text)
    with pytest.raises(ValueError, match="nvidia-smi topo -m > ") as refused:
        read_topo_file(saved)
    assert str(saved) in str(refused.value)


def test_a_saved_matrix_nvidia_smi_cannot_write_is_said_not_read_in_silence(golden) -> None:
    """A short row, a pair whose cells differ and NV99 are no matrix ``nvidia-smi`` writes:
    each is a problem of the topology (its JSON's ``matrix_problems``), not read in
    silence; the real matrices have none."""
    from gpuscale.interconnect.topology import MAX_NVLINKS

    bad = "\tGPU0\tGPU1\nGPU0\t X \tNV99\nGPU1\tPHB\n"
    problems = parse_topo_matrix(bad).problems
    assert len(problems) == 3
    assert [p.split(" ")[0] for p in problems] == ["GPU1's", "GPU0", "GPU0"]
    assert str(MAX_NVLINKS) in problems[2] and MAX_NVLINKS == 18
    golden.check("interconnect/topology", "matrix problems", "\n".join(problems))
    odd = "\tGPU0\tGPU1\tGPU2\nGPU0\tNV4\tFOO\tNV0\nGPU1\tFOO\tX\tPHB\nGPU1\tX\tX\tX\n"
    said = parse_topo_matrix(odd).problems
    assert len(said) == 6  # GPU2 no row, GPU1 twice, FOO in two rows, GPU0's own NV4, NV0
    assert sum("FOO" in p for p in said) == 2 and any("NV0" in p for p in said)
    for text in (PHB_PAIR, H100_8, A100_8, DUAL_SOCKET, BRIDGE):
        topology = parse_topo_matrix(text)
        assert topology.problems == [] and topology.to_dict()["matrix_problems"] == []


def test_a_gpu_row_given_twice_is_read_once_and_said_never_a_traceback(tmp_path, golden) -> None:
    """GPU1's row given twice: the first is read, the second said, and the topo command
    ends well (never a pandas traceback)."""
    from typer.testing import CliRunner

    from gpuscale.cli import app

    saved = tmp_path / "topo.txt"
    saved.write_text("\tGPU0\tGPU1\nGPU0\tX\tPHB\nGPU1\tPHB\tX\nGPU1\tNV4\tX\n")
    result = CliRunner().invoke(app, ["topo", "--file", str(saved)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("WARNING: GPU1") and "PHB" in lines[1]  # the first row read
    golden.check("interconnect/topology", "topo: a GPU row given twice", result.output)


@pytest.mark.parametrize(
    ("text", "gpu", "part", "moved"),
    [
        (PHB_PAIR, "H100", "H100 PCIe 80GB", True),  # GPUs meeting through PCIe: cards
        (H100_8, "H100", "H100 SXM5 80GB", False),  # all over NVLink: the SXM board
        (PHB_PAIR, "H100 SXM", "H100 SXM5 80GB", False),  # the part named stands
        (DUAL_SOCKET, "A100", "A100 PCIe 80GB", True),
        (BRIDGE, "A100", "A100 SXM4 80GB", False),  # all over NVLink
        # an NV4 pair on PHB: a PCIe A100 has a bridge, no PCIe V100 has NVLink
        (NV4_PAIR_ON_PHB, "A100", "A100 PCIe 80GB", True),
        (NV4_PAIR_ON_PHB, "V100", "V100 SXM2 16GB", False),
    ],
)
def test_a_name_of_several_forms_is_read_as_the_form_the_links_imply(
    text: str, gpu: str, part: str, moved: bool
) -> None:
    found = parse_topo_matrix(text, gpu).part()
    assert found is not None and found.device.name == part
    assert ("implies" in found.assumed) == moved


def test_a_gpu_without_a_row_leaves_no_link_behind() -> None:
    """A matrix cut short or missing a row: the GPUs read are numbered as the rows give them,
    and no link to a GPU without a row remains (GPU1's row missing: GPU0-GPU2 is the NV4
    pair, not GPU1's PHB column; rows of GPU0 and GPU1 only: no PHB pair off the ring)."""
    head = "\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\tNUMA Affinity\n"
    mid = parse_topo_matrix(
        head + "GPU0\t X \tPHB\tNV4\tPHB\t0-31\t0\nGPU2\tNV4\tPHB\t X \tPHB\t0-31\t0\n"
        "GPU3\tPHB\tPHB\tPHB\t X \t0-31\t0\n"
    )
    assert [g.name for g in mid.gpus] == ["GPU0", "GPU2", "GPU3"]
    assert mid.matrix() == [["X", "NV4", "PHB"], ["NV4", "X", "PHB"], ["PHB", "PHB", "X"]]
    assert mid.problems == ["GPU1 has no row: its links are unknown"]
    cut = parse_topo_matrix(
        head + "GPU0\t X \tNV4\tPHB\tPHB\t0-31\t0\nGPU1\tNV4\t X \tPHB\tPHB\t0-31\t0\n"
    )
    assert cut.links == {(0, 1): "NV4", (1, 0): "NV4"}
    assert (cut.slowest_link(), cut.ring_link()) == ("NV", "NV")


def test_a_pcie_card_named_on_nvswitch_or_past_its_bridge_is_warned() -> None:
    """A PCIe card's NVLink is a bridge between two cards (the H100 PCIe's 12 links, where
    the SXM part's NVLink 4 has 18): ``--gpu "H100 PCIe"`` on an 8-GPU NVSwitch NV18 matrix
    gave 370.8 GB/s in silence. Now it warns, as an RTX 4090 named there does, and gives
    no figure; a bridged pair within the card's links is read as before."""
    switched = parse_topo_matrix(H100_8, "H100 PCIe")
    assert switched.problems == [
        "GPU0, GPU1, GPU2, GPU3, GPU4, GPU5, GPU6, GPU7 meet through NVSwitch (NV18), where "
        "the H100 PCIe 80GB's NVLink is a bridge between two cards: the matrix or the GPU "
        "named is wrong"
    ]
    assert switched.expected_busbw_gbs() is None
    assert switched.to_dict()["expected_busbw_gbs"] is None
    pair = parse_topo_matrix(BRIDGE.replace("NV4", "NV18"), "H100 PCIe")
    assert pair.problems == [
        "GPU0, GPU1 have 18 NVLinks each, more than the H100 PCIe 80GB's bridge has (12): "
        "the matrix or the GPU named is wrong"
    ]
    assert pair.expected_busbw_gbs() is None
    bridged = parse_topo_matrix(BRIDGE.replace("NV4", "NV12"), "H100 PCIe")
    assert bridged.problems == [] and bridged.expected_busbw_gbs() == pytest.approx(12 * 20.6)
    # the SXM part on the same matrix: its figure, no warning
    sxm = parse_topo_matrix(H100_8, "H100 SXM")
    assert sxm.problems == [] and sxm.expected_busbw_gbs() == pytest.approx(18 * 20.6)


@pytest.mark.parametrize(
    "encoding, bom",
    [
        ("utf-16", b""),
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", codecs.BOM_UTF16_BE),
        ("utf-8", codecs.BOM_UTF8),
    ],
)
def test_a_matrix_saved_as_utf16_or_with_a_bom_is_read(
    tmp_path: Path, encoding: str, bom: bytes
) -> None:
    """``ssh node nvidia-smi topo -m > topo.txt`` in Windows PowerShell 5 writes UTF-16
    with its byte-order mark, Notepad UTF-8 with one: both were refused as "no GPU header
    row ... not a saved `nvidia-smi topo -m`"; now read as the same matrix, by ``topo``
    as by the reader ``collectives`` and ``advise`` share."""
    from gpuscale.interconnect.topology import read_topo_file

    saved = tmp_path / "saved topo.txt"
    saved.write_bytes(bom + H100_8.replace("\n", "\r\n").encode(encoding))
    topo = read_topo_file(saved)
    assert (len(topo.gpus), topo.expected_busbw_gbs()) == (8, pytest.approx(18 * 20.6))
    result = CliRunner().invoke(app, ["topo", "--file", str(saved), "-f", "json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    assert (len(info["gpus"]), info["nvlinks_per_gpu"], info["matrix_problems"]) == (8, 18, [])
