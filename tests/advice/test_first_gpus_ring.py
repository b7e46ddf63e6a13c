"""Each count of a node priced on the ring through its first GPUs (torchrun's N ranks take
GPUs 0..N-1), not the whole node's: on a 4-GPU matrix where only GPU0-GPU1 share NVLink, 2
devices at the NVLink's figure and class, 4 at PHB's; on a DGX-1 V100, 4 devices at their
4 NVLinks a GPU (80 GB/s), 8 at 6 (120); the GPUs of a faster ring named, not priced; a
saved matrix's link said as read from its file, and its problems warned; an NVSwitch node
and a PCIe switch priced as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.api import Advice
from gpuscale.advice.model.network import count_class
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.cli import app
from gpuscale.interconnect.topology import parse_topo_matrix

from ..interconnect.test_ring_link import DGX1, PAIR_01, PAIR_02, V100, _matrix
from ..interconnect.test_topology_text import H100_8

WALK = {"params": 350e6, "step_ms": 120, "batch": 16}


def _advise(tmp_path: Path, text: str, **asked: object) -> Advice:
    path = tmp_path / "topo.txt"
    path.write_text(text)
    return gpuscale.advise(**WALK, topo=str(path), device_name=V100, **asked)


def _link_said(advice: Advice) -> Finding:
    (said,) = [
        f
        for f in advice.calibration.said.sources
        if isinstance(f, Finding) and f.kind is FindingKind.LINK_DETECTED
    ]
    return said


def _comm_ms(advice: Advice) -> dict[int, float]:
    return dict(zip(advice.table["accelerators"], advice.table["comm_ms"], strict=True))


def test_two_devices_of_the_nv_pair_are_priced_on_nvlink_four_on_phb(tmp_path: Path) -> None:
    advice = _advise(tmp_path, PAIR_01)
    network = advice.calibration.machine.network
    assert [network.intra.busbw_at(n) for n in (2, 3, 4)] == [80.0, 10.0, 10.0]
    assert [count_class(network, n) for n in (2, 4)] == ["nvlink", "pcie_no_p2p"]
    assert network.intra.name == f"pcie-phb (read from {tmp_path / 'topo.txt'})"
    said = _link_said(advice)
    assert (said["file"], said["busbw_gbs"], said["better"]) == (
        str(tmp_path / "topo.txt"),
        10.0,
        None,
    )
    (at,) = said["at"]  # type: ignore[misc]
    assert (at["gpus"], at["link"], at["preset"], at["busbw_gbs"]) == (
        (0, 1),
        "NV",
        "nvlink2",
        80.0,
    )
    # against the whole node's PHB at 2 devices: the NVLink's 8x the bandwidth
    phb = gpuscale.advise(**WALK, interconnect="pcie-phb", device_name=V100, max_devices=4)
    assert _comm_ms(advice)[2] < _comm_ms(phb)[2] / 5 and _comm_ms(advice)[4] == _comm_ms(phb)[4]
    assert "2 devices over NV (nvlink2, 80 GB/s)" in " ".join(advice.explanation)


def test_a_dgx1s_four_devices_are_priced_on_their_own_nvlinks(tmp_path: Path) -> None:
    advice = _advise(tmp_path, DGX1)
    intra = advice.calibration.machine.network.intra
    assert [intra.busbw_at(n) for n in (2, 4, 8)] == [20.0, 80.0, 120.0]
    said = _link_said(advice)
    assert [(f["gpus"], f["busbw_gbs"]) for f in said["at"]] == [
        ((0, 1), 20.0),
        ((0, 1, 2, 3), 80.0),
    ]  # type: ignore[union-attr]
    (better,) = said["better"]  # type: ignore[misc]
    assert (better["visible"], better["busbw_gbs"], better["first_gbs"]) == ("0,3", 40.0, 20.0)
    assert "CUDA_VISIBLE_DEVICES=0,3" in " ".join(advice.explanation)


def test_the_gpus_of_a_faster_ring_are_said_not_priced(tmp_path: Path) -> None:
    advice = _advise(tmp_path, PAIR_02)
    assert advice.calibration.machine.network.intra.busbw_at(2) == 10.0  # GPUs 0-1: PHB
    (better,) = _link_said(advice)["better"]  # type: ignore[misc]
    assert (better["gpus"], better["link"], better["first_link"]) == ((0, 2), "NV", "PHB")


@pytest.mark.parametrize(
    "text", [H100_8, _matrix([["X" if i == j else "PIX" for j in range(4)] for i in range(4)])]
)
def test_a_node_of_one_link_class_is_priced_as_before(tmp_path: Path, text: str) -> None:
    advice = _advise(tmp_path, text)
    intra = advice.calibration.machine.network.intra
    assert intra.within == () and _link_said(advice)["at"] is None


def test_a_topology_given_is_detected_and_a_matrixs_problems_are_warned(tmp_path: Path) -> None:
    given = gpuscale.advise(**WALK, topology=parse_topo_matrix(PAIR_01, V100))
    assert given.calibration.machine.network.intra.name == "pcie-phb (detected)"
    assert _link_said(given)["file"] is None
    rows = [r.split("\t")[1:5] for r in PAIR_01.splitlines()[1:]]
    rows[2][1] = "NV4"  # GPU2 to GPU1 NV4, GPU1 to GPU2 PHB
    advice = _advise(tmp_path, _matrix(rows))
    (warned,) = [
        f
        for f in advice.calibration.said.warnings
        if getattr(f, "kind", None) is FindingKind.TOPOLOGY_PROBLEM
    ]
    assert "GPU1 to GPU2 is PHB but GPU2 to GPU1 is NV4" in str(warned["problem"])
    assert any("WARNING: the topology in" in w for w in advice.decision.warnings)


def test_topo_json_keeps_stdout_one_document_and_warns_on_stderr(tmp_path: Path) -> None:
    rows = [r.split("\t")[1:5] for r in PAIR_01.splitlines()[1:]]
    rows[2][1] = "NV4"
    path = tmp_path / "topo.txt"
    path.write_text(_matrix(rows))
    result = CliRunner().invoke(app, ["topo", "--file", str(path), "-f", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["matrix_problems"]
    assert result.stderr.startswith("WARNING: GPU1 to GPU2 is PHB")


@pytest.mark.parametrize(
    ("text", "part"),
    [
        (PAIR_01, "V100 SXM2 16GB"),  # two GPUs share NVLink: SXM boards, their ring on PHB
        (_matrix([["X", "PHB"], ["PHB", "X"]]), "V100 PCIe 16GB"),  # no NVLink: PCIe cards
    ],
)
def test_the_device_is_read_from_the_nodes_nvlink_not_its_slowest_link(
    tmp_path: Path, text: str, part: str
) -> None:
    path = tmp_path / "topo.txt"
    path.write_text(text)
    advice = gpuscale.advise(**WALK, topo=str(path), device_name="V100")
    device = advice.calibration.machine.device
    assert device.part is not None and device.part.name == part


def test_the_answer_names_the_faster_gpus_of_the_next_count(tmp_path: Path) -> None:
    from gpuscale.advice.explain.answer import better_gpus, lines

    advice = _advise(tmp_path, PAIR_02)
    assert (advice.decision.read.accelerators, advice.decision.focus.accelerators) == (1, 2)
    (change,) = [line for line in lines(advice) if line.startswith("To change it")]  # type: ignore[arg-type]
    assert change.endswith(better_gpus(advice)) and "CUDA_VISIBLE_DEVICES=0,2`" in change  # type: ignore[arg-type]
    # GPUs 0 and 1 share the NVLink: the first GPUs are the best, nothing to name
    assert better_gpus(_advise(tmp_path, PAIR_01)) == ""  # type: ignore[arg-type]


def test_json_carries_each_counts_ring_and_the_faster_gpus(tmp_path: Path) -> None:
    path = tmp_path / "topo.txt"
    path.write_text(PAIR_02)
    asked = ["--params", "350M", "--step-ms", "120", "--batch", "16", "--device-name", V100]
    result = CliRunner().invoke(app, ["advise", *asked, "--topo", str(path), "-f", "json"])
    assert result.exit_code == 0, result.output
    topology = json.loads(result.stdout)["topology"]
    assert (topology["file"], topology["ring_link"], topology["busbw_gbs"]) == (
        str(path),
        "PHB",
        10.0,
    )
    rings = [(r["devices"], r["gpus"], r["link"], r["busbw_gbs"]) for r in topology["rings"]]
    assert rings == [(2, [0, 1], "PHB", 10.0), (4, [0, 1, 2, 3], "PHB", 10.0)]
    (better,) = topology["better"]
    assert (better["devices"], better["visible_devices"], better["link"]) == (2, "0,2", "NV")
    assert (better["preset"], better["busbw_gbs"], better["first_busbw_gbs"]) == (
        "nvlink2",
        80.0,
        10.0,
    )


def _source(advice: Advice, kind: FindingKind) -> Finding:
    (found,) = [
        f for f in advice.calibration.said.sources if isinstance(f, Finding) and f.kind is kind
    ]
    return found


def test_the_cap_says_a_default_count_the_given_link_its_file_and_the_title_each_ring(
    tmp_path: Path,
) -> None:
    from gpuscale.advice.explain.document import table_title

    capped = _source(_advise(tmp_path, PAIR_01), FindingKind.TOPOLOGY_CAP)
    assert (capped["gpus"], capped["asked"], capped["default"]) == (4, 8, True)
    asked = _source(_advise(tmp_path, PAIR_01, max_devices=8), FindingKind.TOPOLOGY_CAP)
    assert (asked["asked"], asked["default"]) == (8, False)
    given = _source(_advise(tmp_path, DGX1, interconnect="nvlink4"), FindingKind.LINK_PRESET)
    assert (given["name"], given["file"], given["over"]) == (
        "nvlink4",
        str(tmp_path / "topo.txt"),
        "nvlink2",
    )
    advice = _advise(tmp_path, PAIR_01)
    assert table_title(advice.calibration).endswith("; 2 devices on nvlink2 (80 GB/s)")


def test_a_topo_path_with_a_space_is_named_as_a_shell_takes_it(tmp_path: Path) -> None:
    path = tmp_path / "sub dir" / "my topo.txt"
    path.parent.mkdir()
    path.write_text(PAIR_01)
    advice = gpuscale.advise(**WALK, topo=str(path), device_name=V100)
    name = advice.calibration.machine.network.intra.name
    assert name == f"pcie-phb (read from '{path}')"
    assert _link_said(advice)["file"] == str(path)  # -f json's: the path itself
