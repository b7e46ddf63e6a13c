"""A one-node sweep of n ranks is judged against the ring of the GPUs it ran on
(``expected.sweep_gpus``, ``Topology.ring_of``): GPUs 0..n-1, or the first n that
``CUDA_VISIBLE_DEVICES`` named where the sweep's header recorded it; not the whole node's
ring. Hand-written ``nvidia-smi topo -m`` matrices and one-row sweeps, no torch run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscale.bench.collectives_sweep import ranks_gpus
from gpuscale.hardware.links import PRESETS
from gpuscale.interconnect.expected import gpu_span, sweep_gpus
from gpuscale.interconnect.nvml import nvml_topology
from gpuscale.interconnect.records import read_sweeps
from gpuscale.interconnect.shown import link_sentence
from gpuscale.interconnect.topology import parse_topo_matrix
from gpuscale.interconnect.verdict import LOW, NORMAL, SUSPICIOUS, OpVerdict, judge

from ..fake_nvml import FakeNvml, hgx_h100
from .test_ring_link import DGX1, PAIR_01, V100
from .test_topology_text import H100_8

SCHEMA = "gpuscale.collectives/2"
THROUGH_CPU = "meet only through the CPU"


def _judged(
    tmp_path: Path,
    busbw_gbs: float,
    ranks: int,
    topo,
    *,
    nodes: int = 1,
    preset: str | None = None,
    **header,
) -> OpVerdict:
    """The verdict of one all_reduce sweep on ``ranks`` ranks peaking at ``busbw_gbs``."""
    head = {"schema": SCHEMA, "kind": "sweep", "sweep_id": "s", "device": "cuda"}
    head |= {"nodes": nodes, "ranks": ranks, **header}
    row = {"schema": SCHEMA, "kind": "result", "sweep_id": "s", "op": "all_reduce"}
    row |= {"status": "ok", "size_bytes": 1 << 30, "ranks": ranks, "busbw_gbs": busbw_gbs}
    path = tmp_path / f"c{ranks}.jsonl"
    path.write_text(json.dumps(head) + "\n" + json.dumps(row) + "\n")
    (v,) = judge(read_sweeps(path), topology=topo, preset=preset)
    return v


@pytest.mark.parametrize(
    "ranks, gpus, expected_gbs",
    [
        (2, (0, 1), 20.0),  # GPUs 0-1 share one NVLink (NV1)
        (4, (0, 1, 2, 3), 80.0),  # 4 NVLinks a GPU around 0-1-2-3
        (8, tuple(range(8)), 120.0),  # the node's ring: 6 a GPU
    ],
)
def test_dgx1_each_count_against_its_first_gpus_ring(
    tmp_path: Path, ranks: int, gpus: tuple[int, ...], expected_gbs: float
) -> None:
    v = _judged(tmp_path, 0.9 * expected_gbs, ranks, parse_topo_matrix(DGX1, V100))
    assert v.expected_busbw_gbs == pytest.approx(expected_gbs)
    assert v.verdict == NORMAL  # 90% of its own ring; 2 ranks at 18 GB/s were 15% of 120
    assert (v.gpus, v.ring_link, v.ring_preset) == (gpus, "NV", "nvlink2")
    fields = json.loads(json.dumps(v.to_dict()))
    assert (fields["gpus"], fields["expected_busbw_gbs"]) == (list(gpus), expected_gbs)
    assert fields["ring_link"] == "NV" and fields["ring_preset"] == "nvlink2"
    # words only where the ring is not the node's: its GPUs and the node's figure
    said = v.sentence()
    assert ("GPUs 0-" in said) is (ranks < 8)
    assert ("node's 8 GPUs (nvlink2, 120 GB/s)" in said) is (ranks < 8)


def test_visible_devices_name_the_gpus(tmp_path: Path) -> None:
    """CUDA_VISIBLE_DEVICES=3,0 (recorded by the header): 2 ranks on GPUs 3 and 0, an
    NV2 pair of the DGX-1 (40 GB/s); names the saved matrix does not hold (a UUID, an
    index past its GPUs): GPUs 0..n-1, as a sweep that recorded none."""
    dgx1 = parse_topo_matrix(DGX1, V100)
    v = _judged(tmp_path, 36.0, 2, dgx1, visible_devices="3,0,1")
    assert (v.gpus, v.expected_busbw_gbs, v.verdict) == ((3, 0), 40.0, NORMAL)
    assert "GPUs 3,0's ring" in v.sentence()
    for visible in ("GPU-5a3c,GPU-77b1", "8,9", "1,1", "2"):
        assert sweep_gpus({"visible_devices": visible}, dgx1, 2) == (0, 1)
    assert sweep_gpus({"visible_devices": "5,4"}, dgx1, 8) == tuple(range(8))  # all of them
    assert (gpu_span((0, 1, 2)), gpu_span((4, 5)), gpu_span((1, 0)), gpu_span((6,))) == (
        "0-2",
        "4-5",
        "1,0",
        "6",
    )


def test_nv_pair_then_phb(tmp_path: Path) -> None:
    """GPUs 0 and 1 share 4 NVLinks, the rest meet through PHB: 2 ranks at 80 GB/s are
    their NVLink's (80 GB/s), not 800% of the PHB figure; 3 or 4 ranks cross PHB (10
    GB/s). A slow 2-rank sweep names no through-the-CPU cause (its GPUs do not meet so);
    a slow 4-rank one does."""
    pair = parse_topo_matrix(PAIR_01, V100)
    v = _judged(tmp_path, 80.0, 2, pair)
    assert (v.expected_busbw_gbs, v.verdict, v.ring_preset) == (80.0, NORMAL, "nvlink2")
    assert "node's 4 GPUs (pcie-phb, 10 GB/s)" in v.sentence()
    slow = _judged(tmp_path, 20.0, 2, pair)
    assert slow.verdict == SUSPICIOUS and not any(THROUGH_CPU in c for c in slow.causes)
    for ranks in (3, 4):
        v = _judged(tmp_path, 4.0, ranks, pair)
        assert (v.expected_busbw_gbs, v.verdict, v.ring_link) == (10.0, LOW, "PHB")
        assert any(THROUGH_CPU in c for c in v.causes) and "GPUs 0-" not in v.sentence()


def test_nvswitch_every_count_the_same(tmp_path: Path) -> None:
    """8 H100s on NVSwitch: 2, 4 or 8 ranks expect the same 370.8 GB/s in the same words."""
    h100 = parse_topo_matrix(H100_8)
    said = {_judged(tmp_path, 350.0, n, h100).sentence() for n in (2, 4, 8)}
    assert len(said) == 1 and "371 GB/s expected for nvlink4" in said.pop()
    assert _judged(tmp_path, 350.0, 2, h100).expected_busbw_gbs == pytest.approx(370.8)


def test_topo_and_the_verdict_say_one_figure_alike(tmp_path: Path) -> None:
    """``gpuscale topo`` said the H100 ring's 370.8 GB/s as "370.8", the collectives verdict
    on it "371": one figure, one rounding (three significant digits) in both; JSON keeps
    the figure whole."""
    h100 = parse_topo_matrix(H100_8)
    info = h100.to_dict()
    assert info["expected_busbw_gbs"] == pytest.approx(370.8)
    verdict = _judged(tmp_path, 350.0, 8, h100).sentence()
    topo = link_sentence(h100, info)
    assert "of the 371 GB/s expected" in verdict and "bus bandwidth 371 GB/s (" in topo
    assert "370.8" not in verdict + topo


def test_across_nodes_and_presets_unchanged(tmp_path: Path) -> None:
    """2 nodes of 2 ranks are still judged against the node's own ring (an upper bound),
    and a preset asked for sets the figure: no ring of the topology's named."""
    dgx1 = parse_topo_matrix(DGX1, V100)
    v = _judged(tmp_path, 100.0, 4, dgx1, nodes=2)
    assert (v.expected_busbw_gbs, v.gpus) == (120.0, None) and "across 2 nodes" in v.sentence()
    p = _judged(tmp_path, 18.0, 2, dgx1, preset="nvlink2")
    assert (p.expected_busbw_gbs, p.gpus, p.ring_link) == (PRESETS["nvlink2"].busbw_gbs, None, None)


def test_nvml_ranks_by_torch_order(tmp_path: Path) -> None:
    """NVML's topology holds the visible GPUs in NVML's order: local ranks take torch's
    (CUDA_VISIBLE_DEVICES=6,3,1 on an HGX H100: ranks 0 and 1 on NVML's GPU 6 and 3,
    the topology's 2 and 1); the UUIDs in a header's visible_devices name them too."""
    uuids = ["GPU-h100-6", "GPU-h100-3", "GPU-h100-1"]
    visible = nvml_topology(FakeNvml(hgx_h100()), visible_uuids=uuids)
    assert ranks_gpus(visible, uuids, 2) == (2, 1)
    assert ranks_gpus(visible, None, 2) == (0, 1) and ranks_gpus(visible, uuids, 3) == (0, 1, 2)
    assert ranks_gpus(None, uuids, 2) == ()
    whole = nvml_topology(FakeNvml(hgx_h100()))
    assert sweep_gpus({"visible_devices": "GPU-h100-6,GPU-h100-3"}, whole, 2) == (6, 3)


def test_the_header_records_the_visible_devices(monkeypatch: pytest.MonkeyPatch) -> None:
    """The worker's sweep header carries CUDA_VISIBLE_DEVICES as set (None where unset)."""
    torch = pytest.importorskip("torch")
    from gpuscale.bench import collectives
    from gpuscale.bench.collectives_config import CollectivesConfig

    monkeypatch.setattr(collectives.dist, "get_world_size", lambda: 2)
    monkeypatch.setattr(collectives.dist, "get_backend", lambda: "gloo")
    cpu = torch.device("cpu")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3,0")
    assert collectives._header(CollectivesConfig(), "s", cpu)["visible_devices"] == "3,0"
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    assert collectives._header(CollectivesConfig(), "s", cpu)["visible_devices"] is None


def test_a_topology_read_without_a_figure_says_why_not_that_none_was_detected(
    tmp_path: Path,
) -> None:
    """NV18 between 8 GPUs named V100 (6 NVLinks a GPU) gives the ring no bandwidth: the
    verdict has no expected figure and says the matrix's problem, not "not detected"."""
    topo = parse_topo_matrix(H100_8, V100)
    assert topo.problems and topo.expected_busbw_gbs() is None  # the premise
    verdict = _judged(tmp_path, 300.0, 8, topo)
    assert verdict.expected_busbw_gbs is None
    assert "not detected" not in verdict.reference and topo.problems[0] in verdict.reference
