"""A device named to the advice is checked against its peak, or the advice says it could
not be and why (a walk: ``--device-name L4``, ``A10`` and ``V100``, catalogue devices then
without a peak, skipped the achieved-FLOP/s check without a word). The datasheet peaks
added are held here, and every catalogue GPU either has one or is said to lack one."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.explain.phrasebook import said
from gpuscale.cli import app
from gpuscale.hardware.accelerators import gpu_products
from gpuscale.hardware.peaks import peak_for

from ..golden import Golden
from .lines import flat

VIEW = "advice/peak_known_or_said"

# dense TFLOP/s (fp32, tf32, bf16/fp16) from NVIDIA's datasheets (the device catalogue)
DATASHEETS = {
    "NVIDIA A10": (31.2, 62.5, 125.0),
    "NVIDIA A30": (10.3, 82.0, 165.0),
    "NVIDIA A40": (37.4, 74.8, 149.7),
    "NVIDIA L4": (30.3, 60.0, 121.0),  # the datasheet's with-sparsity figures halved
    "NVIDIA L40": (90.5, 90.5, 181.05),
    "Tesla T4": (8.1, 8.1, 65.0),  # no TF32 or BF16 tensor cores: FP32, FP16 tensor
    "Tesla V100-SXM2-16GB": (15.7, 15.7, 125.0),
    "Tesla V100-PCIE-32GB": (14.0, 14.0, 112.0),
    "Tesla V100S-PCIE-32GB": (16.4, 16.4, 130.0),
}
# 688 TFLOP/s of 6 x parameters work over the whole step: above each peak added
TOO_FAST = {"params": 7e6, "step_ms": 0.5, "batch": 8192, "link": "pcie4-x16"}


@pytest.mark.parametrize("name", sorted(DATASHEETS))
def test_the_datasheet_peaks(name: str) -> None:
    peak = peak_for(name)
    assert peak is not None and (peak.fp32, peak.tf32, peak.bf16) == DATASHEETS[name]


def test_model_numbers_stay_whole() -> None:
    """The new patterns read no other part: an A10G (AWS's, no datasheet) is no A10, an
    L40S keeps its own peak, an RTX A4000 (its own datasheet's) or an L40 no L4."""
    assert peak_for("NVIDIA A10G") is None
    assert peak_for("NVIDIA L40S").device == "L40S"
    assert peak_for("NVIDIA L40").device == "L40"
    assert peak_for("NVIDIA RTX A4000").device == "RTX A4000"


@pytest.mark.parametrize("device", ["A10", "L4", "V100", "T4", "A30", "A40", "L40"])
def test_the_walks_devices_are_checked_against_their_peak(device: str) -> None:
    advice = gpuscale.advise(**TOO_FAST, device_name=device)
    flagged = [w for w in advice.decision.warnings if w.startswith("IMPLAUSIBLE")]
    assert flagged and "peak" in flagged[0], advice.decision.warnings
    assert advice.recommended == 1
    assert not any(
        s.startswith("Plausibility:") for s in map(said, advice.calibration.said.sources)
    )


@pytest.mark.parametrize("device", ["A10G", "TPU v4", "H800"])
def test_a_device_without_a_peak_is_said_unchecked_and_why(device: str, golden: Golden) -> None:
    advice = gpuscale.advise(**TOO_FAST, device_name=device)
    said = [s for s in advice.explanation if s.startswith("Plausibility:")]
    assert len(said) == 1, advice.explanation
    assert device in said[0] and "no peak FLOP/s" in said[0] and "688 TFLOP/s" in said[0]
    assert not [w for w in advice.decision.warnings if w.startswith("IMPLAUSIBLE")]
    golden.check(VIEW, f"{device}: no peak", said[0])
    result = CliRunner().invoke(
        app,
        ["advise", "--explain", "--params", "7M", "--step-ms", "0.5", "--batch", "8192",
         "--interconnect", "pcie4-x16", "--device-name", device],
    )  # fmt: skip
    assert result.exit_code == 0 and flat(said[0]) in flat(result.output)


def test_a_device_with_a_peak_or_none_named_says_nothing_of_it() -> None:
    for named in ({"device_name": "H100"}, {}):
        advice = gpuscale.advise(**TOO_FAST, **named)
        assert not any(s.startswith("Plausibility:") for s in advice.explanation)


def test_every_catalogue_gpu_has_a_peak_or_the_module_names_it() -> None:
    """The peaks module's docstring lists the catalogue's devices it has no peak for: a
    GPU added to the catalogue without a peak is named there, or given one."""
    import gpuscale.hardware.peaks as peaks

    listed = " ".join((peaks.__doc__ or "").split())
    missing = [p for p in gpu_products() if peak_for(p) is None]
    named = {p: p.replace("-", " ") in listed or p in listed for p in missing}
    unnamed = [p for p, ok in named.items() if not ok and not p.startswith("MI")]
    assert unnamed == [], unnamed
