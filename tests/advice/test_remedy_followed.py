"""Every remedy a refusal names, followed, changes the outcome: the flags it names are read
off the refusal and run again. The count a memory refusal says would hold the model is
capped by the topology's GPUs (more --max-devices alone changes nothing there) or by the
most devices allowed."""

from __future__ import annotations

import re

import pytest

import gpuscale
from gpuscale.advice.search.decide import Advice
from gpuscale.advice.types import FindingKind
from gpuscale.interconnect.topology import parse_topo_matrix

from ..golden import Golden

VIEW = "advice/remedy_followed"
ONE_GPU = "\tGPU0\tCPU Affinity\nGPU0\t X \t0-15\n"
TWO_GPUS = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tPHB\t0-15\nGPU1\tPHB\t X \t0-15\n"
# a 7B model under Adam: 112 GB a device under DDP, ZeRO-2 holds it on 2 H100s
SEVEN_B = {"params": 7e9, "step_ms": 900.0, "batch": 4, "global_batch": 64}
# a 70B model: FSDP holds it on 16 H100s
SEVENTY_B = {"params": 70e9, "step_ms": 900.0, "batch": 8, "device_name": "H100"}


def _refused(topology: str | None = None, **fields: object) -> str:
    topo = None if topology is None else parse_topo_matrix(topology)
    with pytest.raises(ValueError) as refused:
        gpuscale.advise(**fields, topology=topo)
    return str(refused.value)


def _flags(said: str) -> dict[str, int]:
    """The numbered flags the refusal's remedy names (``--max-devices 16``)."""
    remedy = said.rsplit(" holds it on ", 1)[1]
    return {m[1].replace("-", "_"): int(m[2]) for m in re.finditer(r"--([a-z-]+) (\d+)", remedy)}


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
    kinds = {getattr(f, "kind", None) for f in followed.calibration.said.sources}
    assert FindingKind.NODES_SPILL in kinds  # over whole nodes of 8
