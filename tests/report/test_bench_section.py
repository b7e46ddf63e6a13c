"""The report's own-hardware section: findings follow the numbers; figures are written."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.results import bench_table
from gpuscale.report.bench_section import bench_findings, build_bench_section

from ..builders import bench_record


def table(pairs: list[tuple[str, str, int, float, float]]) -> pd.DataFrame:
    rows = []
    for model, family, params, one, two in pairs:
        for world, sps in ((1, one), (2, two)):
            overhead = 1.5 if world == 2 else 0.0
            rows.append(
                bench_record(model, params, world, sps, family=family, sync_overhead_ms=overhead)
            )
    return bench_table(rows)


def test_break_even_sentence() -> None:
    scaling = bench_scaling(table([("a", "mlp", 10**5, 100, 50), ("b", "mlp", 10**7, 100, 150)]))
    text = " ".join(bench_findings(scaling))
    assert "break-even model size is 1M parameters" in text  # log-midpoint of 0.5 -> 1.5


def test_mixed_without_crossing() -> None:
    scaling = bench_scaling(table([("a", "mlp", 10**5, 100, 50), ("t", "tf", 10**6, 100, 150)]))
    text = " ".join(bench_findings(scaling))
    assert "a train slower" in text and "t faster" in text


def test_all_slower_and_files(tmp_path: Path) -> None:
    bench = table([("a", "mlp", 10**5, 100, 50), ("b", "mlp", 10**6, 100, 60)])
    section = build_bench_section(bench, tmp_path)
    assert section is not None
    assert "every model trains slower" in " ".join(section.findings)
    assert (tmp_path / "bench_step_breakdown.png").exists()
    assert len(section.rows) == 4 and section.rows[0]["Model"] == "a"


def test_advice_adds_predictions(tmp_path: Path) -> None:
    bench = table([("a", "mlp", 10**5, 100, 50), ("b", "mlp", 10**6, 100, 60)])
    section = build_bench_section(bench, tmp_path, advice={"link": "pcie-phb", "max_devices": 4})
    assert any(f.startswith("Advice for b:") for f in section.findings)
    assert (tmp_path / "advice_predicted_scaling.svg").exists()


def test_flagged_runs_are_shown_with_their_reason_and_left_out(tmp_path: Path) -> None:
    rows = [
        bench_record("a", 10**5, 1, 100.0),
        bench_record("a", 10**5, 2, 150.0, sync_overhead_ms=1.0),
        bench_record("b", 10**6, 1, 100.0),
        {**bench_record("b", 10**6, 2, 190.0), "flags": ["noisy steps: p95 2x the median"]},
    ]
    section = build_bench_section(bench_table(rows), tmp_path)
    text = " ".join(section.findings)
    assert "Left out of these findings and the advice, as not trustworthy: b on 2" in text
    assert "Best scaling on 2: a" in text  # not b's untrustworthy 1.9x
    reasons = [r["Not trusted because"] for r in section.rows]
    assert any("noisy steps" in r for r in reasons)
