"""The link an all-reduce ring runs over: the best cycle through every GPU, not the
slowest pair (NCCL searches rings over NVLink first), in ``topo``'s JSON and first line,
the verdict's reference and the advice's detected link."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.cli import app
from gpuscale.interconnect.expected import expected_busbw
from gpuscale.interconnect.shown import link_sentence
from gpuscale.interconnect.topology import _has_ring, parse_topo_matrix

from .test_topology_text import A100_8, DUAL_SOCKET, H100_8, PHB_PAIR


def _matrix(rows: list[list[str]]) -> str:
    """``nvidia-smi topo -m`` text of a square matrix of link codes (``X`` on the diagonal)."""
    n = len(rows)
    head = "\t" + "\t".join(f"GPU{i}" for i in range(n)) + "\tCPU Affinity\n"
    return head + "".join(f"GPU{i}\t" + "\t".join(r) + "\t0-31\n" for i, r in enumerate(rows))


# NV4 around 0-1-3-2-0, PCIe through the host bridge across it (0-3, 1-2)
RING_4 = _matrix(
    [
        ["X", "NV4", "NV4", "PHB"],
        ["NV4", "X", "PHB", "NV4"],
        ["NV4", "PHB", "X", "NV4"],
        ["PHB", "NV4", "NV4", "X"],
    ]
)
# NVLink along 0-1-2-3 only: no ring closes without PCIe
CHAIN_4 = _matrix(
    [
        ["X", "NV4", "PHB", "PHB"],
        ["NV4", "X", "NV4", "PHB"],
        ["PHB", "NV4", "X", "NV4"],
        ["PHB", "PHB", "NV4", "X"],
    ]
)
# DGX-1 (V100): the hybrid cube-mesh, 6 NVLinks a GPU, SYS between GPUs without one
DGX1 = _matrix(
    [
        ["X", "NV1", "NV1", "NV2", "NV2", "SYS", "SYS", "SYS"],
        ["NV1", "X", "NV2", "NV1", "SYS", "NV2", "SYS", "SYS"],
        ["NV1", "NV2", "X", "NV2", "SYS", "SYS", "NV1", "SYS"],
        ["NV2", "NV1", "NV2", "X", "SYS", "SYS", "SYS", "NV1"],
        ["NV2", "SYS", "SYS", "SYS", "X", "NV1", "NV1", "NV2"],
        ["SYS", "NV2", "SYS", "SYS", "NV1", "X", "NV2", "NV1"],
        ["SYS", "SYS", "NV1", "SYS", "NV1", "NV2", "X", "NV2"],
        ["SYS", "SYS", "SYS", "NV1", "NV2", "NV1", "NV2", "X"],
    ]
)
A100 = "A100-SXM4-80GB"
V100 = "Tesla V100-SXM2-16GB"


@pytest.mark.parametrize(
    "text, gpu, slowest, ring, preset, expected, nvlinks",
    [
        (RING_4, A100, "PHB", "NV", "nvlink3", 8 * 20.0, 8),  # both neighbours' NV4
        (RING_4, None, "PHB", "NV", None, None, 8),  # NV4 of 4 GPUs: generation not told
        (CHAIN_4, A100, "PHB", "PHB", "pcie-phb", 10.0, None),
        (DGX1, V100, "SYS", "NV", "nvlink2", 6 * 20.0, 6),
        # where the slowest pair is the ring's too, as before
        (H100_8, None, "NV", "NV", "nvlink4", 18 * 20.6, 18),
        (A100_8, None, "NV", "NV", "nvlink3", 12 * 20.0, 12),
        (DUAL_SOCKET, None, "SYS", "SYS", "pcie-sys", 10.0, None),
        (PHB_PAIR, None, "PHB", "PHB", "pcie-phb", 10.0, None),
    ],
)
def test_the_ring_link_sets_the_preset_and_bandwidth(
    text, gpu, slowest, ring, preset, expected, nvlinks
) -> None:
    topo = parse_topo_matrix(text, gpu)
    assert (topo.slowest_link(), topo.ring_link()) == (slowest, ring)
    assert topo.preset() == preset and topo.nvlinks_per_gpu() == nvlinks
    assert topo.expected_busbw_gbs() == (None if expected is None else pytest.approx(expected))
    info = topo.to_dict()
    assert (info["slowest_link"], info["ring_link"], info["preset"]) == (slowest, ring, preset)


def test_a_broken_ring_of_nvlink_falls_back_to_the_slowest_pair() -> None:
    # the 4-GPU ring with one NVLink gone (0-1 over PHB): a chain 1-3-2-0 is left
    rows = [r.split("\t")[1:5] for r in RING_4.splitlines()[1:]]
    rows[0][1] = rows[1][0] = "PHB"
    topo = parse_topo_matrix(_matrix(rows), A100)
    assert topo.ring_link() == "PHB" and topo.expected_busbw_gbs() == 10.0


def test_the_cycle_search_agrees_with_every_ordering() -> None:
    """``_has_ring`` against trying every order of the GPUs, on random link sets."""
    chance = random.Random(7)
    for _ in range(400):
        n = chance.randint(2, 7)
        adj = tuple(
            sum(1 << j for j in range(n) if j != i and chance.random() < 0.45) for i in range(n)
        )
        brute = any(
            all(adj[c[k]] >> c[(k + 1) % n] & 1 for k in range(n))
            for c in ((0, *p) for p in itertools.permutations(range(1, n)))
        )
        assert _has_ring(adj) == brute, adj


def test_sixteen_gpus_of_two_nvlink_rings_joined_by_pcie() -> None:
    # GPUs 0-7 and 8-15 each an NVLink ring, PIX between the two halves: the ring crosses PIX
    rows = [["X" if i == j else "PIX" for j in range(16)] for i in range(16)]
    for half in (0, 8):
        for k in range(8):
            a, b = half + k, half + (k + 1) % 8
            rows[a][b] = rows[b][a] = "NV12"
    topo = parse_topo_matrix(_matrix(rows))
    assert (topo.slowest_link(), topo.ring_link()) == ("PIX", "PIX")
    rows[7][8] = rows[8][7] = rows[15][0] = rows[0][15] = "NV12"  # 0-...-7-8-...-15-0 closes
    assert parse_topo_matrix(_matrix(rows)).ring_link() == "NV"


def test_topo_says_the_ring_link_first_and_the_slowest_pair(tmp_path: Path) -> None:
    path = tmp_path / "topo spaces.txt"  # a name with a space, as a user may save it
    path.write_text(RING_4)
    args = ["topo", "--file", str(path), "--gpu", A100]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    first = result.stdout.splitlines()[0]
    assert first.startswith("ring link: NV (nvlink3) -> preset nvlink3")
    assert "160 GB/s" in first and "slowest pair PHB" in first
    info = json.loads(CliRunner().invoke(app, [*args, "-f", "json"]).stdout)
    assert (info["ring_link"], info["slowest_link"]) == ("NV", "PHB")
    assert info["expected_busbw_gbs"] == 160.0


def test_where_the_ring_is_the_slowest_pair_the_sentence_is_as_before() -> None:
    topo = parse_topo_matrix(H100_8)
    assert link_sentence(topo, topo.to_dict()).startswith(
        "slowest link: NV (NVSwitch, nvlink4) -> preset nvlink4; "
        "expected all-reduce bus bandwidth 371 GB/s ("
    )


def test_a_matrix_cut_short_gives_no_figure_and_says_why_not_asking_for_gpu() -> None:
    """The DGX H100 matrix cut after GPU0's row: NV18 tells NVLink 4 without --gpu, but
    GPU1's row holds no cell, so its NVLinks are unknown; the sentence says that, not
    --gpu (which cannot supply the missing row)."""
    cut = H100_8.split("\nGPU1\t", 1)[0] + "\nGPU1\t\n"
    for name in (None, "H100 SXM"):
        topo = parse_topo_matrix(cut, name)
        assert (topo.nvlink_generation, topo.expected_busbw_gbs()) == ("nvlink4", None)
        assert any("0 of 8 GPU cells" in p for p in topo.problems)
        assert link_sentence(topo, topo.to_dict()).endswith(
            "unknown (a GPU's NVLinks are not in the matrix: see the warnings)"
        )


def test_the_verdict_and_the_advice_read_the_ring() -> None:
    topo = parse_topo_matrix(RING_4, A100)
    expected, words = expected_busbw({"device": "cuda"}, topo, None, 4, None)
    assert expected == pytest.approx(160.0) and "off the ring" in words and "PHB" in words
    result = gpuscale.advise(params=7e6, step_ms=20, batch=64, topology=topo)
    assert result.calibration.machine.network.intra.busbw_gbs == pytest.approx(160.0)
    (said,) = [line for line in result.explanation if line.startswith("Link:")]
    assert "ring" in said and "PHB" in said and "160 GB/s" in said


def test_more_nvlinks_than_the_gpu_named_has_are_said_and_give_no_figure() -> None:
    """NV18 between 8 GPUs on NVSwitch is an H100's 18 NVLinks; named V100 (6 NVLinks,
    ``data/links.json``), no such GPU is made: the matrix problem names the GPUs and the
    counts, and no bandwidth is made of it. A DGX-1 V100 (6 a GPU) is none."""
    nvswitch = _matrix([["X" if i == j else "NV18" for j in range(8)] for i in range(8)])
    h100 = parse_topo_matrix(nvswitch, "H100 SXM")
    assert h100.problems == [] and h100.expected_busbw_gbs() == pytest.approx(18 * 20.6)
    v100 = parse_topo_matrix(nvswitch, "V100")
    (said,) = [p for p in v100.problems if "NVLinks" in p]
    assert "GPU0" in said and "GPU7" in said and "18 NVLinks each" in said and "(6," in said
    assert v100.expected_busbw_gbs() is None
    ring = parse_topo_matrix(RING_4.replace("NV4", "NV6"), "V100")  # 12 NVLinks a GPU
    assert any("12 NVLinks each" in p for p in ring.problems)
    assert parse_topo_matrix(DGX1, "V100").problems == []


def test_nvlink_in_a_matrix_of_a_gpu_without_nvlink_is_said_and_gives_no_figure() -> None:
    """NV18 between 8 GPUs named L40S (no NVLink in the catalogue) is no NVLink 4 of an
    H100: the generation is not read off the bundles, the problem names the GPUs, the
    bundle and the part, and no preset or bandwidth is made of it; NV4 named RTX 3090 is
    its bridge (48 GB/s), the same matrix named L4 (no NVLink) none."""
    nvswitch = _matrix([["X" if i == j else "NV18" for j in range(8)] for i in range(8)])
    l40s = parse_topo_matrix(nvswitch, "L40S")
    (said,) = l40s.problems
    assert "GPU0" in said and "GPU7" in said and "(NV18)" in said and "L40S" in said
    assert (l40s.nvlink_generation, l40s.preset(), l40s.expected_busbw_gbs()) == (None,) * 3
    bridge = _matrix([["X", "NV4"], ["NV4", "X"]])
    rtx = parse_topo_matrix(bridge, "RTX 3090")
    assert rtx.problems == [] and rtx.expected_busbw_gbs() == pytest.approx(48.0)
    l4 = parse_topo_matrix(bridge, "L4")
    assert l4.expected_busbw_gbs() is None and "(NV4)" in l4.problems[0]


# NV4 between GPU0 and GPU1 only (PHB the rest), and between GPU0 and GPU2 only
def _pair(pair: set[int]) -> str:
    return _matrix(
        [
            ["X" if i == j else ("NV4" if {i, j} == pair else "PHB") for j in range(4)]
            for i in range(4)
        ]
    )


PAIR_01, PAIR_02 = _pair({0, 1}), _pair({0, 2})


def _ring(topo, gpus) -> tuple:
    ring = topo.ring_of(gpus)
    return ring.gpus, ring.link, ring.preset, ring.busbw_gbs


def test_the_first_gpus_ring_is_their_own_not_the_nodes() -> None:
    """torchrun's n ranks run over GPUs 0..n-1: 2 of the NV pair + PHB over NVLink (4
    links of a V100's, 80 GB/s), 3 over PHB as all 4; a DGX-1's first 4 over their 4
    NVLinks a GPU (80 GB/s), not the 8's 6 (120 GB/s); an NVSwitch node's and a PCIe
    switch's every count as the whole, so none apart."""
    pair = parse_topo_matrix(PAIR_01, V100)
    assert pair.ring_link() == "PHB" and pair.expected_busbw_gbs() == 10.0
    firsts = [(r.gpus, r.link, r.preset, r.busbw_gbs) for r in pair.first_rings()]
    assert firsts == [((0, 1), "NV", "nvlink2", 80.0)]
    assert _ring(pair, range(3)) == ((0, 1, 2), "PHB", "pcie-phb", 10.0)
    dgx1 = parse_topo_matrix(DGX1, V100)
    assert _ring(dgx1, range(4)) == ((0, 1, 2, 3), "NV", "nvlink2", 80.0)
    assert dgx1.expected_busbw_gbs() == 120.0 and dgx1.within(range(8)) is dgx1
    assert dgx1.within((0, 1)) is dgx1.within((0, 1))  # built once
    for text in (H100_8, _matrix([["X" if i == j else "PIX" for j in range(4)] for i in range(4)])):
        assert parse_topo_matrix(text).first_rings() == ()


def test_the_best_gpus_for_a_count_are_found_where_the_first_are_slower() -> None:
    """GPUs 0 and 2 share the NVLink: 2 devices' best ring is theirs; the first such in
    order where several tie (a DGX-1's NV2 pairs: GPUs 0 and 3)."""
    pair = parse_topo_matrix(PAIR_02, V100)
    assert _ring(pair, (0, 1))[1] == "PHB"
    best = pair.best_ring(2)
    assert (best.gpus, best.link, best.busbw_gbs) == ((0, 2), "NV", 80.0)
    assert pair.best_ring(3).gpus == (0, 1, 2)  # every 3 of them cross PHB: the first
    dgx1 = parse_topo_matrix(DGX1, V100)
    assert (dgx1.best_ring(2).gpus, dgx1.best_ring(2).busbw_gbs) == ((0, 3), 40.0)
    assert dgx1.best_ring(4).gpus == (0, 1, 2, 3)
