"""A GPU row read from a results file carries the MFU of the peak the device catalogue
knows, even where the bench recorded none (an L4 benched before its peak was added), and
a GPU the table has no peak for is said to have no MFU, and why (a blank column alone
reads as unmeasured)."""

from __future__ import annotations

import math
from typing import Any

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.analysis.bench_sentences import bench_notes
from gpuscale.bench.results import bench_table

from ..builders import bench_record


def _gpu(name: str, world: int, achieved: float = 3.03) -> dict[str, Any]:
    record = bench_record("mlp-1m", 1_000_000, world, 100.0 * world)
    record["config"]["device"] = "cuda"
    record["environment"]["device_name"] = name
    record["flops"] = {"per_sample": 6e6, "achieved_tflops_per_device": achieved}
    return record


def test_a_known_gpu_benched_without_a_peak_gets_it_on_read() -> None:
    table = bench_table([_gpu("NVIDIA L4", 1), _gpu("NVIDIA L4", 2)])
    assert (table["peak_tflops"] == 30.3).all()  # fp32, TF32 off: the L4's FP32 peak
    assert math.isclose(float(table["mfu"].iloc[0]), 3.03 / 30.3)
    assert not [n for n in bench_notes(bench_scaling(table), table.iloc[:0]) if "no MFU" in n]


def test_a_recorded_peak_stands() -> None:
    record = _gpu("NVIDIA L4", 1)
    record["flops"].update(peak_tflops=99.0, mfu=0.5)
    table = bench_table([record])
    assert float(table["peak_tflops"].iloc[0]) == 99.0 and float(table["mfu"].iloc[0]) == 0.5


def test_a_gpu_without_a_peak_is_said_to_have_no_mfu() -> None:
    table = bench_table([_gpu("NVIDIA A10G", 1), _gpu("NVIDIA A10G", 2)])
    assert table["mfu"].isna().all()
    said = [n for n in bench_notes(bench_scaling(table), table.iloc[:0]) if "no MFU" in n]
    assert len(said) == 1 and "NVIDIA A10G" in said[0] and "no peak FLOP/s" in said[0]


def test_cpu_rows_say_nothing_of_a_peak() -> None:
    table = bench_table([bench_record("mlp-1m", 1_000_000, n, 100.0 * n) for n in (1, 2)])
    assert not [n for n in bench_notes(bench_scaling(table), table.iloc[:0]) if "MFU" in n]


def test_advice_on_a_gpu_without_a_peak_says_its_rate_was_not_checked(tmp_path) -> None:
    """The bench path says it too: the rate it measured on such a GPU was not checked
    against that GPU's peak; on an L4, now known, it is checked and nothing is said."""
    import gpuscale
    from gpuscale.bench.results_file import append_result

    for name, said in (("NVIDIA A10G", True), ("NVIDIA L4", False)):
        path = tmp_path / f"{name.split()[-1]}.jsonl"
        for world in (1, 2):
            append_result(path, _gpu(name, world))
        advice = gpuscale.advise(bench=path, link="pcie4-x16")
        notes = [s for s in advice.explanation if s.startswith("Plausibility: not checked")]
        assert bool(notes) == said, advice.explanation
        # the rate it names is the one priced (the steps less their fixed cost), said apart
        # from the rate the bench recorded
        assert not notes or (name in notes[0] and "not the rate it recorded" in notes[0])


def test_flops_per_sample_past_the_peak_is_flagged_whatever_the_rate_recorded() -> None:
    """A row whose flops.per_sample alone was raised (1e20: 87 billion TFLOP/s at its
    samples/s) was read against the rate it recorded (275 TFLOP/s) and advised "2 devices
    1.66e-08x", a 1,730,000,000 ms step: the rate its FLOPs and samples/s give is checked
    against the peak too, and the row flagged."""
    import json
    from pathlib import Path

    from gpuscale.plausibility import FlagKind

    path = Path(__file__).parents[1] / "advice" / "h100_resnet50_bf16.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert not bench_table(rows)["flag_kinds"].map(lambda k: FlagKind.ABOVE_PEAK in k).any()
    rows[0]["flops"]["per_sample"] = 1e20
    kinds = bench_table(rows)["flag_kinds"]
    assert [FlagKind.ABOVE_PEAK in k for k in kinds] == [True, False]
