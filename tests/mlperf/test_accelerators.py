"""Accelerator names -> vendor, product, variant and family: every name of every round in
../shared, the splits and mistakes of the old rules, and names the catalogue lacks."""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest

from gpuscale.mlperf.accelerators import normalise_accelerator
from gpuscale.mlperf.systems import parse_system

# Every accelerator_model_name in the system files of v1.1, v3.0, v3.1, v4.0, v4.1 and
# v5.0 (../shared/mlperf), with the family a person reading it assigns.
SEEN: dict[str, str] = {
    "AMD Instinct MI300X 192GB HBM3": "MI300X",
    "AMD Instinct MI325X 256GB HBM3E DLC": "MI325X",
    "AMD Instinct MI325X 256GB HBM3e": "MI325X",
    "AMD Radeon RX 7900 XTX": "RX 7900 XTX",
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
    "NVIDIA A100-SXM4-80GB (500W)": "A100-SXM4-80GB",
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
    assert part.vendor in ("NVIDIA", "AMD", "Intel", "Google", "Graphcore")


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
    [("NVIDIA NVIDIA Foo 9000", "NVIDIA Foo 9000"), ("Acme Tensor Thing", "Acme Tensor Thing")],
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


SHARED = Path(__file__).resolve().parents[3] / "shared" / "mlperf"


@pytest.mark.shared
@pytest.mark.slow
def test_every_name_in_shared_is_in_the_list_above() -> None:
    """Bundled rounds from their shipped systems table; the others from their archive."""
    from gpuscale.mlperf.bundled import bundled_rounds, load_round
    from gpuscale.mlperf.layout import round_name_from_path

    archives = sorted(SHARED.glob("training_results_v*.tar.xz"))
    if not archives:
        pytest.skip(f"no rounds in {SHARED}")
    bundled = bundled_rounds()
    names = set(load_round().systems["accelerator_model"].astype(str))
    for archive in archives:
        if round_name_from_path(archive) in bundled:
            continue
        with tarfile.open(archive, "r|xz") as tar:
            for member in tar:
                if "/systems/" in member.name and member.name.endswith(".json"):
                    data = tar.extractfile(member)
                    desc = json.loads(data.read()) if data else {}
                    names.add(str(desc.get("accelerator_model_name")))
    names.discard("N/A")  # CPU-only systems: family "unknown", reported
    assert "NVIDIA A100-PCIE-40GB (250W)" in names  # v1.1 was read
    assert names <= set(SEEN), sorted(names - set(SEEN))
