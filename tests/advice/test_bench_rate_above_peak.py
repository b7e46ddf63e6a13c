"""A bench rate that cannot be true is flagged where it is made, and the advice says so (a new
user's walk: the H100 bench file with every step time divided by 100 recorded an MFU of 2.13,
2,111 TFLOP/s on a 989 TFLOP/s device, and neither ``analyze --bench`` nor ``advise --bench``
said a word: the advice checks the per-sample rate it prices, never faster than the peak).
And where the device has no known peak, the note that says the rate went unchecked names the
rate it means, the bench's recorded one beside it, at the precision the run used (bf16 here:
it named the gradients' fp32)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.calibrate.errors import CalibrationError
from gpuscale.advice.explain.phrasebook import said
from gpuscale.advice.types import Finding, FindingKind
from gpuscale.bench.results import load_bench
from gpuscale.plausibility import MAX_MFU, FlagKind, mfu_above_peak, peak_flags

from ..golden import Golden

FILE = Path(__file__).parent / "h100_resnet50_bf16.jsonl"
VIEW = "advice/bench_rate_above_peak"
FASTER = 100.0  # every step time divided by this


def _records() -> list[dict]:
    return [json.loads(line) for line in FILE.read_text(encoding="utf-8").splitlines()]


def _write(tmp_path: Path, name: str, records: list[dict]) -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _fast(tmp_path: Path) -> Path:
    """The file as a bench would have written it with every step FASTER times shorter: its
    times divided, its throughput and rate (and so its MFU) multiplied."""
    records = _records()
    for r in records:
        timing = r["timing"]
        for key, value in timing.items():
            if "_ms" in key and isinstance(value, float):
                timing[key] = value / FASTER
        timing["samples_per_s"] *= FASTER
        r["per_rank"] = {k: [[v / FASTER for v in rank] for rank in ranks]
                         for k, ranks in r["per_rank"].items()}  # fmt: skip
        r["flops"]["achieved_tflops_per_device"] *= FASTER
        r["flops"]["mfu"] *= FASTER
    return _write(tmp_path, "fast.jsonl", records)


def _a10g(tmp_path: Path) -> Path:
    """The file as a bench on an A10G (no peak in the catalogue) would have written it."""
    records = _records()
    for r in records:
        r["environment"]["device_name"] = "NVIDIA A10G"
        r["environment"]["topology"]["gpus"][0]["model"] = "NVIDIA A10G"
        r["flops"]["peak_tflops"] = r["flops"]["mfu"] = None
    return _write(tmp_path, "a10g.jsonl", records)


def _found(findings: tuple[object, ...], kind: FindingKind) -> list[Finding]:
    return [f for f in findings if isinstance(f, Finding) and f.kind == kind]


def test_the_rule_flags_an_mfu_above_one_only() -> None:
    assert mfu_above_peak(2111.0, 989.4) == pytest.approx(2111.0 / 989.4)
    assert mfu_above_peak(989.4, 989.4) is None  # at the peak: possible
    assert mfu_above_peak(21.1, 989.4) is None
    assert mfu_above_peak(2111.0, None) is None and mfu_above_peak(2111.0, float("nan")) is None
    assert MAX_MFU == 1.0
    (reason,) = peak_flags(2111.0, 989.4)
    assert reason.startswith(f"{FlagKind.ABOVE_PEAK}: ") and "; " not in reason


def test_the_bench_table_flags_a_rate_above_the_peak(tmp_path: Path, golden: Golden) -> None:
    table = load_bench(_fast(tmp_path)).table
    assert (table["mfu"] > 1).all()
    assert table["flagged"].all()
    assert all(FlagKind.ABOVE_PEAK.value in kinds for kinds in table["flag_kinds"])
    assert (table["evidence"] == "flagged").all()
    golden.check(VIEW, "bench table flag", table["flags"].iloc[0])
    # the file as measured: 2% of the peak, nothing flagged for it
    measured = load_bench(FILE).table
    assert (measured["mfu"] < 1).all()
    assert not any(FlagKind.ABOVE_PEAK.value in kinds for kinds in measured["flag_kinds"])


def test_the_advice_refuses_the_runs_or_warns_implausible(tmp_path: Path, golden: Golden) -> None:
    path = _fast(tmp_path)
    with pytest.raises(CalibrationError):  # every N = 1 run flagged: none to advise on
        gpuscale.advise(bench=path)
    advice = gpuscale.advise(bench=path, allow_flagged=True)
    (found,) = _found(advice.calibration.said.warnings, FindingKind.RECORDED_ABOVE_PEAK)
    latest = load_bench(path).table.iloc[-1]  # the N = 1 run calibrated on: the latest
    values = dict(found.values)
    assert values["tflops"] == pytest.approx(latest["achieved_tflops_per_device"])
    assert values["peak_tflops"] == pytest.approx(989.4)
    assert values["mfu"] == pytest.approx(latest["mfu"])
    assert values["precision"] == "bf16"
    assert advice.calibration.said.implausible
    assert [w for w in advice.decision.warnings if w.startswith("IMPLAUSIBLE")]
    golden.check(VIEW, "advice warning", said(found))
    # the file as measured warns of nothing
    measured = gpuscale.advise(bench=FILE)
    assert not _found(measured.calibration.said.warnings, FindingKind.RECORDED_ABOVE_PEAK)
    assert not measured.calibration.said.implausible


def test_an_unchecked_rate_is_named_with_the_recorded_one(tmp_path: Path, golden: Golden) -> None:
    path = _a10g(tmp_path)
    advice = gpuscale.advise(bench=path)
    (found,) = _found(advice.calibration.said.sources, FindingKind.PEAK_UNCHECKED)
    values = dict(found.values)
    latest = load_bench(path).table.iloc[-1]
    assert values["recorded_tflops"] == pytest.approx(latest["achieved_tflops_per_device"])
    assert values["tflops"] == pytest.approx(advice.calibration.model.compute.tflops)
    assert values["precision"] == "bf16"  # the run's, not its fp32 gradients'
    assert values["device"] == "NVIDIA A10G" and values["rate_of"] == "bench"
    golden.check(VIEW, "unchecked on an A10G", said(found))
