"""Every remedy a refusal names, followed, changes the outcome: the flags it names are read
off the refusal and run again. The count a memory refusal says would hold the model is
capped by the topology's GPUs (more --max-devices alone changes nothing there) or by the
most devices allowed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.api import Advice
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.interconnect.topology import parse_topo_matrix

from ..golden import Golden

VIEW = "advice/remedy_followed"
ONE_GPU = "\tGPU0\tCPU Affinity\nGPU0\t X \t0-15\n"
TWO_GPUS = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPHB\t0-15\nGPU1\tPHB\t X \t0-15\n"
# a 7B model under Adam: 112 GB a device under DDP, ZeRO-2 holds it on 2 H100s
SEVEN_B = {"params": 7e9, "step_ms": 900.0, "batch": 4, "global_batch": 64}
# a 70B model: FSDP holds it on 16 H100s
SEVENTY_B = {"params": 70e9, "step_ms": 900.0, "batch": 8, "device_name": "H100"}
# a model that scales past 8 devices on NVLink (two measured steps)
PAYS = {"params": 1e9, "step_ms": (500.0, 300.0), "batch": (64, 32)}
TWO_NVLINK = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\t0-15\nGPU1\tNV18\t X \t0-15\n"
H100_PATHS = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"


def _refused(topology: str | None = None, **fields: object) -> str:
    topo = None if topology is None else parse_topo_matrix(topology)
    with pytest.raises(ValueError) as refused:
        gpuscale.advise(**fields, topology=topo)
    return str(refused.value)


def _flags(said: str) -> dict[str, int]:
    """The numbered keywords the refusal's remedy names (``max_devices=16``)."""
    remedy = said.rsplit(" holds it on ", 1)[1]
    return {m[1]: int(m[2]) for m in re.finditer(r"([a-z_]+)=(\d+)", remedy)}


def _findings(advice: Advice) -> list[Finding]:
    return [f for f in advice.calibration.said.sources if isinstance(f, Finding)]


def _fits_from(advice: Advice, strategy: str) -> int | None:
    memory = advice.calibration.machine.memory
    assert memory is not None
    return memory.fits_from(strategy)


def test_one_gpu_topology_names_it_as_the_cap_and_each_remedy_holds_the_model(
    golden: Golden,
) -> None:
    """The refusal said "allow them: --max-devices 2", which the one GPU capped again."""
    said = _refused(ONE_GPU, **SEVEN_B)
    golden.check(VIEW, "one GPU: the topology caps the count", said)
    with pytest.raises(ValueError) as again:  # more devices allowed: still one GPU
        gpuscale.advise(**SEVEN_B, max_devices=2, topology=parse_topo_matrix(ONE_GPU))
    assert str(again.value) == said
    flags = _flags(said)
    assert flags == {"gpus_per_node": 1, "max_devices": 2}
    nodes = gpuscale.advise(**SEVEN_B, **flags, topology=parse_topo_matrix(ONE_GPU))
    assert _fits_from(nodes, "zero2") == 2 and nodes.recommended == 2
    other = gpuscale.advise(**SEVEN_B, link="pcie-phb")  # --topo left out, the link named
    assert _fits_from(other, "zero2") == 2 and other.recommended >= 2


def test_a_topology_of_two_gpus_names_whole_nodes_of_two() -> None:
    said = _refused(TWO_GPUS, **SEVENTY_B)
    flags = _flags(said)
    assert flags == {"gpus_per_node": 2, "max_devices": 16}
    followed = gpuscale.advise(**SEVENTY_B, **flags, topology=parse_topo_matrix(TWO_GPUS))
    assert _fits_from(followed, "fsdp") == 16  # 16 searched, and holds it


@pytest.mark.parametrize("max_devices", [None, 4, 8])
def test_the_devices_allowed_as_the_cap_name_more_of_them(max_devices: int | None) -> None:
    """--nodes 2 was named; beside a --max-devices given it searched no more devices."""
    asked = {} if max_devices is None else {"max_devices": max_devices}
    said = _refused(**SEVENTY_B, link="nvlink4", **asked)
    flags = _flags(said)
    assert flags == {"max_devices": 16}
    followed = gpuscale.advise(**SEVENTY_B, link="nvlink4", **flags)
    assert _fits_from(followed, "fsdp") == 16
    kinds = {f.kind for f in _findings(followed)}
    assert FindingKind.NODES_SPILL in kinds  # over whole nodes of 8


def test_more_devices_named_as_what_changes_it_lift_a_topologys_cap() -> None:
    """--max-devices alone stays at the topology's GPUs; whole nodes of them do not."""
    two = parse_topo_matrix(TWO_NVLINK)
    capped = gpuscale.advise(**PAYS, topology=two)
    assert capped.decision.limit.change == "devices" and capped.recommended == 2
    same = gpuscale.advise(**PAYS, max_devices=4, topology=two)
    assert same.predictions["accelerators"].max() == 2
    nodes = gpuscale.advise(**PAYS, nodes=2, gpus_per_node=2, topology=two)
    assert nodes.predictions["accelerators"].max() == 4


def test_cpu_processes_capped_at_the_hosts_cores_lift_with_more_devices_allowed() -> None:
    capped = gpuscale.advise(bench=H100_PATHS, model="mlp-4m")
    (cap,) = [f for f in _findings(capped) if f.kind is FindingKind.PROCESSES_CAP]
    assert capped.predictions["accelerators"].max() == cap["host"]
    more = gpuscale.advise(bench=H100_PATHS, model="mlp-4m", max_devices=2 * int(cap["host"]))
    assert more.predictions["accelerators"].max() == 2 * int(cap["host"])


def test_the_next_whole_node_named_past_a_node_is_searched() -> None:
    """``--max-devices 16 searches two`` (the nodes) and ``--max-devices 16 (whole nodes)``
    (what would change it) name the count that, allowed, is predicted."""
    twelve = gpuscale.advise(**PAYS, link="nvlink4", max_devices=12, global_batch=256)
    (spill,) = [f for f in _findings(twelve) if f.kind is FindingKind.NODES_SPILL]
    assert twelve.predictions["accelerators"].max() == 8 and spill["two_nodes"] == 16
    assert twelve.decision.counts.whole_nodes == 16
    sixteen = gpuscale.advise(**PAYS, link="nvlink4", max_devices=16, global_batch=256)
    assert sixteen.predictions["accelerators"].max() == 16
