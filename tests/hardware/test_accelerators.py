"""Accelerator names -> vendor, product, variant and family: every name of every round in
../shared, the names of the rounds ../shared lacks (v0.7-v2.1, v5.1, v6.0), the splits and
mistakes of the old rules, and names the catalogue lacks."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from gpuscale.hardware.accelerators import normalise_accelerator
from gpuscale.mlperf.systems import SystemDescriptionError, parse_system

# Every accelerator_model_name in the system files of v0.7, v1.1, v3.0, v3.1, v4.0, v4.1
# and v5.0 (../shared/mlperf), with the family a person reading it assigns; a bare "TPU"
# (v0.7) takes its version from the system id (OLD_AND_NEW below).
V11_A100 = "NVIDIA A100-PCIE-40GB (250W)"  # as v1.1 names it, and no later round
SEEN: dict[str, str] = {
    "AMD Instinct MI300X 192GB HBM3": "MI300X",
    "AMD Instinct MI325X 256GB HBM3E DLC": "MI325X",
    "AMD Instinct MI325X 256GB HBM3e": "MI325X",
    "AMD Radeon RX 7900 XTX": "RX 7900 XTX",
    "Ascend910": "Ascend910",
    "Graphcore IPU GC200": "IPU-GC200",
    "H100 NVL Tensor Core GPU (PCIe)": "H100-NVL-94GB",
    "Habana Gaudi": "Gaudi",
    "Habana Gaudi2": "Gaudi2",
    "Intel Gaudi2": "Gaudi2",
    "Intel(R) Gaudi(R) 2 AI Accelerator": "Gaudi2",
    "NVIDIA A100 - PCIe - 80 GB": "A100-PCIe-80GB",
    "NVIDIA A100-PCIE-40GB (250W)": "A100-PCIe-40GB",
    "NVIDIA A100-PCIE-80GB (300W)": "A100-PCIe-80GB",
    "NVIDIA A100-PCIe-40GB (250W)": "A100-PCIe-40GB",
    "NVIDIA A100-PCIe-80GB": "A100-PCIe-80GB",
    "NVIDIA A100-PCIe-80GB (300W)": "A100-PCIe-80GB",
    "NVIDIA A100-SXM-40GB": "A100-SXM4-40GB",
    "NVIDIA A100-SXM-80GB (400W)": "A100-SXM4-80GB",
    "NVIDIA A100-SXM-80GB CTS": "A100-SXM4-80GB",
    "NVIDIA A100-SXM4-40GB": "A100-SXM4-40GB",
    "NVIDIA A100-SXM4-40GB (400W)": "A100-SXM4-40GB",
    "NVIDIA A100-SXM4-80GB": "A100-SXM4-80GB",
    "NVIDIA A100-SXM4-80GB (400W)": "A100-SXM4-80GB",
    "NVIDIA A100-SXM4-80GB (500W)": "A100-SXM4-80GB",  # the catalogue's part, any power
    "NVIDIA A100": "A100-SXM4-80GB",  # the catalogue's default where no capacity says
    "NVIDIA A10G": "A10G",
    "NVIDIA A30": "A30",
    "NVIDIA A30-PCIE-24GB": "A30",
    "NVIDIA A40": "A40",
    "NVIDIA Blackwell GPU (B200-SXM-180GB)": "B200",
    "NVIDIA Blackwell GPU (GB200)": "GB200",
    "NVIDIA GeForce RTX 4090": "RTX 4090",
    "NVIDIA H100 80GB HBM3": "H100-SXM5-80GB",
    "NVIDIA H100-PCIe": "H100-PCIe-80GB",
    "NVIDIA H100-PCIe-80GB": "H100-PCIe-80GB",
    "NVIDIA H100-SXM-80GB": "H100-SXM5-80GB",
    "NVIDIA H100-SXM5-80GB": "H100-SXM5-80GB",
    "NVIDIA H100-SXM5-96GB": "H100-SXM5-96GB",
    "NVIDIA H200-NVL-141GB": "H200-NVL-141GB",
    "NVIDIA H200-SXM5-141GB": "H200-SXM5-141GB",
    "NVIDIA L4": "L4",
    "NVIDIA L40": "L40",
    "NVIDIA L40S": "L40S",
    "NVIDIA RTX A5000": "RTX A5000",
    "NVIDIA V100": "V100-SXM2-16GB",  # the catalogue's default part
    "NVIDIA V100-SXM2-16GB (300W)": "V100-SXM2-16GB",  # its board power
    "NVIDIA V100-SXM2-32GB": "V100-SXM2-32GB",
    "NVIDIA V100-SXM3-32GB (350W)": "V100-SXM3-32GB-350W",  # DGX-2
    "NVIDIA V100-SXM3-32GB (450W)": "V100-SXM3-32GB-450W",  # DGX-2H
    "Nvidia Tesla V100": "V100-SXM2-16GB",
    "Nvidia Tesla V100-SXM2-32GB": "V100-SXM2-32GB",
    "Nvidia Tesla V100S-PCIe-32GB": "V100S",
    "TPU v3": "TPU-v3",
    "TPU-trillium": "TPU-Trillium",
    "TPU-v4": "TPU-v4",
    "TPU-v5e": "TPU-v5e",
    "TPU-v5p": "TPU-v5p",
    # Names of later rounds (v5.1) the issue reports split.
    "AMD Instinct MI350X": "MI350X",
    "AMD Instinct MI355X": "MI355X",
    "NVIDIA RTX Pro 6000 SE PCIe 96GB": "RTX Pro 6000",
}


@pytest.mark.parametrize(("name", "family"), sorted(SEEN.items()))
def test_every_name_seen_maps_to_its_family(name: str, family: str) -> None:
    part = normalise_accelerator(name)
    assert part.known and part.family == family
    assert part.vendor in ("NVIDIA", "AMD", "Intel", "Google", "Graphcore", "Huawei")


def test_variants_are_read_from_the_name() -> None:
    a100 = normalise_accelerator("NVIDIA A100-PCIE-40GB (250W)")
    assert (a100.vendor, a100.product, a100.form_factor, a100.memory_gb) == (
        "NVIDIA",
        "A100",
        "PCIe",
        40,
    )
    assert normalise_accelerator("NVIDIA A30-PCIE-24GB").memory_gb == 24
    assert normalise_accelerator("NVIDIA A30").memory_gb is None  # not written: not guessed


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("NVIDIA NVIDIA Foo 9000", "NVIDIA Foo 9000"),
        ("Acme Tensor Thing", "Acme Tensor Thing"),
        # a model number is whole: none of these is an H100, A100 or B200 (`plan -a H1000`
        # must not plan an H100)
        ("NVIDIA H1000", "NVIDIA H1000"),
        ("NVIDIA RTX A1000", "NVIDIA RTX A1000"),
        ("NVIDIA B2000", "NVIDIA B2000"),
    ],
)
def test_unknown_names_are_kept_as_written_and_reported(name: str, family: str) -> None:
    part = normalise_accelerator(name)
    assert not part.known and part.family == family and part.product is None
    record = parse_system(
        json.dumps({"accelerator_model_name": name}).encode(),
        round_name="v9.9",
        org="Acme",
        system_id="box",
    )
    assert record.row["accelerator_family"] == family
    assert any(kind == "unknown accelerator" and name in m for kind, m in record.problems)


# Names of the rounds ../shared does not hold, as their system descriptions write them
# (MLCommons training_results_v0.7, v1.0, v2.0, v2.1, v5.1, v6.0), with the system id
# where the name alone does not say the part, and the family one part should have.
OLD_AND_NEW: list[tuple[str, str, str]] = [
    ("NVIDIA V100-SXM2-16GB (300W)", "dgx1_ngc20.06_mxnet", "V100-SXM2-16GB"),
    ("NVIDIA V100-SXM3-32GB (450W)", "dgx2h_n10_ngc20.06_pytorch", "V100-SXM3-32GB-450W"),
    ("NVIDIA V100-SXM3-32GB (350W)", "dgx2_ngc20.06_tensorflow", "V100-SXM3-32GB-350W"),
    ("NVIDIA V100-SXM2-32GB", "n128_pai_eflops", "V100-SXM2-32GB"),
    ("Nvidia Tesla V100-SXM2-32GB", "C4140", "V100-SXM2-32GB"),
    ("Nvidia Tesla V100S-PCIe-32GB", "DSS8440", "V100S"),
    ("Nvidia Tesla V100", "gx_V100x8_fjmxnet", "V100-SXM2-16GB"),
    ("NVIDIA V100", "gpu-v100-8-TF2.0", "V100-SXM2-16GB"),
    ("TPU", "tpu-v4-128-TF", "TPU-v4"),  # v0.7, v1.0: the version is in the id
    ("TPU", "tpu-v4-6912-TF", "TPU-v4"),
    ("TPU-v4", "cloud-tpu-v4-4096-TF", "TPU-v4"),  # v2.0
    ("TPU v3", "tpu-v3-1024-TF", "TPU-v3"),
    ("TPU v2", "tpu-v2-512", "TPU-v2"),
    ("Ascend910", "modelarts_512_mindspore_close", "Ascend910"),
    ("Habana Gaudi", "SYS-420GH-TNGR", "Gaudi"),
    ("Habana Gaudi2", "HLS-Gaudi2", "Gaudi2"),
    ("Intel Gaudi 3", "gaudi3_n8", "Gaudi3"),
    ("Graphcore Bow IPU", "IPU_POD64_PaddlePaddle", "IPU-Bow"),
    ("Graphcore IPU GC200", "ipu-pod16-TF1", "IPU-GC200"),
    ("NVIDIA A100-SXM4-40GB", "dgxa100_ngc20.06_pytorch", "A100-SXM4-40GB"),
    ("NVIDIA A100-PCIE-80GB", "R5300G5x4A100-PCIE-80GB", "A100-PCIe-80GB"),
    ("NVIDIA H100 NVL", "h100nvl_n1", "H100-NVL-94GB"),
    ("NVIDIA Hopper GPU (GH200)", "Isambard-AI-Phase2-GH200-96GB_n1_v6.0", "GH200"),
    ("NVIDIA Blackwell Ultra GPU (GB300)", "theia-cmh_ngpu512_ngc26.04_nemo", "GB300"),
    ("NVIDIA Blackwell Ultra GPU (B300-SXM-270GB)", "HPE-Compute-XD690", "B300"),
    ("NVIDIA H200-NVL-141GB", "PRIMERGY_CDI_H200_NVL_144GBx8", "H200-NVL-141GB"),
    ("TPU-v6e", "tpu-v6e-256", "TPU-Trillium"),
    ("TPU7x", "tpu-ironwood-256", "TPU-Ironwood"),
    ("AMD Instinct MI355X", "MI355X_EPYC_9575F_primus", "MI355X"),
]


@pytest.mark.parametrize(("name", "system_id", "family"), OLD_AND_NEW)
def test_names_of_every_round_fold_into_one_family_each(name, system_id, family) -> None:
    """TPU v4 was three families (``TPU``, ``TPU-v4``): one; each V100 part (form, memory,
    a board power other than the part's) is a family of its own, as each H100 part is."""
    desc = {"accelerator_model_name": name, "system_name": system_id}
    desc |= {"number_of_nodes": "1", "accelerators_per_node": "8"}
    record = parse_system(
        json.dumps(desc).encode(), round_name="v0.7", org="X", system_id=system_id
    )
    assert record.row["accelerator_family"] == family
    assert not any(kind == "unknown accelerator" for kind, _ in record.problems)


@pytest.mark.parametrize(
    ("name", "capacity", "family", "memory_gb"),
    [
        ("NVIDIA A100", "40G", "A100-SXM4-40GB", 40),  # v0.7's Inspur NF5488
        ("NVIDIA A100", "80 GB", "A100-SXM4-80GB", 80),
        ("NVIDIA A100", "", "A100-SXM4-80GB", 80),  # nothing said: the default part
        ("NVIDIA A100", "640GB", "A100-SXM4-80GB", 80),  # no A100 has 640 GB: not read
        ("NVIDIA A100-SXM-80GB", "40G", "A100-SXM4-80GB", 80),  # the name's size wins
        ("NVIDIA H100-PCIe", "94GB", "H100-PCIe-94GB", 94),
        ("Nvidia Tesla V100", "32GB", "V100-SXM2-32GB", 32),  # v0.7's Fujitsu GX2570
        ("NVIDIA V100", "TODO", "V100-SXM2-16GB", 16),  # v0.7's Google: the default part
    ],
)
def test_the_described_memory_decides_the_variant_a_bare_name_leaves_open(
    name: str, capacity: str, family: str, memory_gb: int
) -> None:
    desc = {"accelerator_model_name": name, "accelerator_memory_capacity": capacity}
    desc |= {"number_of_nodes": "1", "accelerators_per_node": "8"}
    record = parse_system(json.dumps(desc).encode(), round_name="v0.7", org="X", system_id="s")
    assert record.row["accelerator_family"] == family
    assert record.row["accelerator_memory_gb"] == memory_gb


def test_a_bare_tpu_without_a_version_anywhere_is_not_guessed() -> None:
    part = normalise_accelerator("TPU", hint="pod-128")
    assert not part.known and part.family == "TPU"


def test_a_cpu_only_system_is_said_so_not_an_unknown_accelerator() -> None:
    """Intel's CPU submissions (v0.7, v3.x): 'N/A' and 0 accelerators per node."""
    desc = {"accelerator_model_name": "N/A", "accelerators_per_node": "0", "number_of_nodes": "8"}
    record = parse_system(json.dumps(desc).encode(), round_name="v3.0", org="Intel", system_id="x")
    assert record.row["accelerator_family"] == "CPU only"
    assert record.row["accelerators"] is None
    kinds = [kind for kind, _ in record.problems]
    assert "unknown accelerator" not in kinds and "impossible value" not in kinds
    # One problem for its 0, said as what it is; 0 is a whole number, not a bad field.
    assert [m for _, m in record.problems if "accelerators_per_node" in m] == [
        m for _, m in record.problems if "CPU-only system" in m
    ]
    assert kinds.count("bad field") == 1


SHARED = Path(__file__).resolve().parents[3] / "shared" / "mlperf"


@pytest.mark.shared
@pytest.mark.slow
def test_every_system_of_every_shared_round_is_in_the_catalogue() -> None:
    """Every system description of every archive in ../shared, read as the ingest reads
    it: no unknown accelerator, and every name among those listed above."""
    archives = sorted(SHARED.glob("training_results_v*.tar.xz"))
    if not archives:
        pytest.skip(f"no rounds in {SHARED}")
    unknown, names = [], set()
    for archive in archives:
        with tarfile.open(archive, "r|xz") as tar:
            for member in tar:
                parts = member.name.split("/")
                if len(parts) != 4 or parts[2] != "systems" or not member.isfile():
                    continue
                data = tar.extractfile(member).read()  # type: ignore[union-attr]
                system_id = parts[3].removesuffix(".json")
                try:
                    record = parse_system(data, round_name="x", org=parts[1], system_id=system_id)
                except SystemDescriptionError:  # not JSON: a "bad system description" row
                    continue
                names.add(record.row["accelerator_model"])
                if any(kind == "unknown accelerator" for kind, _ in record.problems):
                    unknown.append(member.name)
    assert V11_A100 in names  # v1.1 was read
    assert not unknown, unknown
    assert names - {"N/A", "TPU"} <= set(SEEN), sorted(names - set(SEEN))


@pytest.mark.parametrize(
    "family, part, watts",
    [
        ("A100-SXM4-80GB-500W", "A100-SXM4-80GB", 500.0),  # the power written
        ("A100-SXM4-80GB", "A100-SXM4-80GB", 400.0),  # the catalogue part's
        ("V100-SXM3-32GB-450W", "V100-SXM3-32GB", 450.0),
        ("V100-SXM3-32GB", "V100-SXM3-32GB", None),  # no such part catalogued
        ("TPU-v5p", "TPU-v5p", None),
    ],
)
def test_a_family_s_part_and_board_power(family: str, part: str, watts: float | None) -> None:
    from gpuscale.hardware.accelerators import family_power_w

    assert family_power_w(family) == (part, watts)
    # the family the name with that power written reads as: its own where the catalogue
    # lacks the part (V100 SXM3 at 450 W); the part's where the catalogue has it (a
    # catalogue part keeps its family at any board power a name writes: A100 SXM4 80GB)
    if watts is not None and family != part:
        catalogued = family_power_w(part)[1] is not None
        read = normalise_accelerator(f"NVIDIA {part} ({watts:.0f}W)").family
        assert read == (part if catalogued else family)
