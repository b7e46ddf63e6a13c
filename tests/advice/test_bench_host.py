"""Advice from a bench file measured on another host rests on that host's facts, as its
rows record them, not this machine's: the cores that cap the CPU processes (gloo) and the
link of its GPUs (a user walk: rows of a 16-core, NVLink 4 H100 host, read on a 2-core
machine without a GPU, were capped at 1 process "of this host: 2 core(s)", and priced
on pcie-phb, "no link given and none detected")."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.api import advise_loaded
from gpuscale.advice.explain.phrasebook import sentence, spelled_as
from gpuscale.advice.request import AdviceRequest
from gpuscale.advice.types import FindingKind as K
from gpuscale.advice.types import TermId
from gpuscale.bench.table import bench_table
from gpuscale.hardware.links import PRESETS
from gpuscale.interconnect.topology import Gpu, Topology

from ..golden import Golden
from .lines import lines_on

VIEW = "advice/bench_host"

H100_PATHS = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"


def _records() -> list[dict]:
    return [json.loads(line) for line in H100_PATHS.read_text().splitlines() if line.strip()]


def _cpu_rows() -> list[dict]:
    return [r for r in _records() if r["config"]["device"] == "cpu"]


def _gpu_link() -> str:
    """The NVLink generation every GPU row's topology records (nvlink4 for these rows)."""
    links = {
        r["environment"]["topology"]["nvlink_generation"]
        for r in _records()
        if "topology" in r["environment"]
    }
    assert len(links) == 1
    return links.pop()


@pytest.fixture
def small_machine(monkeypatch: pytest.MonkeyPatch) -> int:
    """This machine: fewer cores than the bench host, no GPU (no topology detected)."""
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    for cores in ("usable_cores", "host_cores"):  # whatever CPU affinity the tests run under
        monkeypatch.setattr(f"gpuscale.advice.calibrate.link.{cores}", lambda: 2)
    monkeypatch.setattr("gpuscale.advice.api.topology_here", lambda *_: None)
    return 2


def test_the_bench_table_keeps_the_hosts_cores_and_link() -> None:
    records = _records()
    table = bench_table(records)
    assert table["host_cpu_count"].tolist() == [r["environment"]["cpu_count"] for r in records]
    gpu = table["device"] == "cuda"
    assert set(table.loc[gpu, "host_link"]) == {_gpu_link()}
    assert set(table.loc[~gpu, "host_link"]) == {""}  # CPU processes: no topology
    # a PCIe card's NVLink generation is a bridge's it may not have: no link recorded
    card = json.loads(json.dumps(records[0]))
    card["environment"]["device_name"] = "NVIDIA H100 PCIe"
    assert bench_table([card])["host_link"].tolist() == [""]


def test_cpu_processes_are_capped_at_the_bench_hosts_cores(
    small_machine: int, golden: Golden
) -> None:
    cpu = _cpu_rows()
    cores = {r["environment"]["cpu_count"] for r in cpu}.pop()
    threads = {r["config"]["threads"] for r in cpu}.pop()
    assert cores // threads > small_machine // threads  # the bench host holds more
    advice = gpuscale.advise(bench=H100_PATHS, model="mlp-4m")
    assert advice.predictions["accelerators"].max() == cores // threads
    capped = lines_on(advice.explanation, "Device count capped")
    assert f"{cores} cores" in capped and f"{threads} threads" in capped
    assert "core(s)" not in capped
    golden.check(VIEW, "capped at the bench host's cores", capped)


@pytest.mark.parametrize("field", ["cpu_total", "host_cpu_count"])
def test_the_cores_an_affinity_allowed_are_said_of_the_hosts(
    tmp_path: Path, small_machine: int, golden: Golden, field: str
) -> None:
    """Under ``taskset -c 0`` the advice said "the bench host's 1 core", the affinity's
    count as the host's: rows that record the host's whole count say it beside them. The
    row's ``environment.cpu_total`` is the table's ``host_cpu_total``: the row's name
    ``host_cpu_count`` (an interim version's) was the table's name for the allowed cores,
    and is still read."""
    rows = _cpu_rows()
    cores = {r["environment"]["cpu_count"] for r in rows}.pop()
    for row in rows:
        row["environment"][field] = 2 * cores  # half the host allowed
    path = tmp_path / "allowed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert set(bench_table(rows)["host_cpu_total"]) == {2 * cores}
    advice = gpuscale.advise(bench=path, model="mlp-4m")
    (found,) = [f for f in advice.calibration.said.sources if f.kind == K.PROCESSES_CAP]
    assert (found["cores"], found["of"]) == (cores, 2 * cores)
    capped = lines_on(advice.explanation, "Device count capped")
    assert f"{cores} cores" in capped and f"(of {2 * cores})" in capped, capped
    golden.check(VIEW, "capped at the cores the affinity allowed", capped)
    whole = gpuscale.advise(bench=H100_PATHS, model="mlp-4m")  # none recorded: as it stands
    (found,) = [f for f in whole.calibration.said.sources if f.kind == K.PROCESSES_CAP]
    assert (found["cores"], found["of"]) == (cores, None)


def test_cpu_processes_without_recorded_cores_use_this_hosts(
    tmp_path: Path, small_machine: int, golden: Golden
) -> None:
    row = _cpu_rows()[0]
    del row["environment"]["cpu_count"]
    path = tmp_path / "older.jsonl"
    path.write_text(json.dumps(row) + "\n")
    advice = gpuscale.advise(bench=path, max_devices=4)
    assert advice.predictions["accelerators"].max() == 4  # asked for: kept
    said = lines_on(advice.explanation, "This host runs at most")
    assert f"{small_machine} cores" in said
    golden.check(VIEW, "capped at this host's cores, none recorded", said)


def _gpu_topologies() -> list[dict]:
    return [r["environment"]["topology"] for r in _records() if "topology" in r["environment"]]


def test_a_one_gpu_hosts_link_is_said_assumed_from_its_gpu_model(
    small_machine: int, golden: Golden
) -> None:
    """The H100 rows' host had one GPU: its topology records no pair of GPUs (slowest link
    none, no NVSwitch), so its nvlink4 is the GPU model's, inferred, never measured: said
    as an assumption with what measures it (a new user's walk read "as the bench host's
    topology records it" and an 8-device advice on it)."""
    link = _gpu_link()
    for topology in _gpu_topologies():  # what the rows hold: one GPU, no link measured
        assert len(topology["gpus"]) == 1 and topology["slowest_link"] is None
    for way, advice in (
        ("Python", gpuscale.advise(bench=H100_PATHS)),
        # `advise --bench`
        ("command", advise_loaded(AdviceRequest(bench=str(H100_PATHS)), here=True)),
    ):
        assert advice.calibration.machine.network.intra.name == link
        assert advice.calibration.machine.network.intra.busbw_gbs == PRESETS[link].busbw_gbs
        said = " ".join(advice.explanation)
        assert "topology records it" not in said
        (assumed,) = [a for a in advice.calibration.said.assumptions if a.term == TermId.LINK]
        assert assumed.source == "assumed" and assumed.value["preset"] == link
        assert assumed.basis.kind == K.NO_LINK_MEASURED and assumed.basis["gpus"] == 1
        assert assumed.measure.before.kind == K.MEASURE_LINK
        with spelled_as(advice.keywords):  # as the advice's reader names the options
            line = sentence("assumption", a=assumed, measure=assumed.measure or None)
        assert line in advice.explanation
        golden.check(VIEW, f"a one-GPU host's link assumed, {way}", line)
        assert f"assumed link, {link}" in " ".join(advice.caveats)
    # the host's own saved topology (one GPU) caps the count at 1: the link still assumed
    one = Topology(gpus=[Gpu(name="GPU0", model="NVIDIA H100 80GB HBM3")])
    capped = gpuscale.advise(bench=H100_PATHS, topology=one)
    assert capped.decision.chosen.accelerators == 1
    assert "topology records it" not in " ".join(capped.explanation)
    assert [a.source for a in capped.calibration.said.assumptions if a.term == TermId.LINK] == [
        "assumed"
    ]


def test_a_link_between_two_gpus_is_said_as_the_topology_records_it(
    tmp_path: Path, small_machine: int, golden: Golden
) -> None:
    """Where the bench host's topology holds 2 GPUs and the NVLink between them, the link
    is said as recorded, not assumed."""
    rows = [r for r in _records() if "topology" in r["environment"]]
    for row in rows:
        topology = row["environment"]["topology"]
        gpu = topology["gpus"][0]
        topology["gpus"] = [gpu, {**gpu, "name": "GPU1", "bus_id": "00000000:00:07.0"}]
        topology.update(matrix=[["X", "NV18"], ["NV18", "X"]], slowest_link="NV")
        topology.update(preset="nvlink4", nvlinks_per_gpu=18)
    path = tmp_path / "two.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    advice = gpuscale.advise(bench=path)
    assert advice.calibration.machine.network.intra.name == "nvlink4"
    golden.check(VIEW, "a link the topology records", lines_on(advice.explanation, "Link:"))
    assert not [a for a in advice.calibration.said.assumptions if a.term == TermId.LINK]
    assert "assumed link" not in " ".join(advice.caveats)


def test_another_detected_topology_is_said_and_the_bench_hosts_used(
    tmp_path: Path, golden: Golden
) -> None:
    gpus = [Gpu(name=f"GPU{i}", model="NVIDIA L4") for i in range(2)]
    here = Topology(gpus=gpus, links={(0, 1): "PHB", (1, 0): "PHB"})
    link = _gpu_link()
    advice = gpuscale.advise(bench=H100_PATHS, topology=here)
    assert advice.calibration.machine.network.intra.name == link
    said = lines_on(advice.explanation, "Link:")
    assert f"interconnect={here.preset()!r}" in said
    golden.check(VIEW, "the bench host's link, not this machine's", said)
    # a link given is the one used, the bench host's not said
    given = gpuscale.advise(bench=H100_PATHS, link="pcie4-x16")
    assert given.calibration.machine.network.intra.name == "pcie4-x16"
    assert "bench host" not in lines_on(given.explanation, "Link:")
