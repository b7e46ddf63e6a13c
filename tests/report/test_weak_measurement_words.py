"""A speedup the bench measured from weak runs is a measurement to repeat, not "a
prediction to test": the quickstart's report said "measured speedup ... mlp-0.2m 0.71x
... weak evidence ...: a prediction to test". Only a figure derived from the runs (the
break-even size interpolated between two models) is a prediction."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.report.bench_section import build_bench_section
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record


def _runs(model: str, params: int, two: float) -> list[dict]:
    config = BenchConfig(steps=2, batch=8)  # 2 timed steps: weak, as the quickstart's
    return [
        bench_record(model, params, n, sps, config=config, batch=8, sync_overhead_ms=s)
        for n, sps, s in ((1, 100.0, 0.0), (2, two, 1.0))
    ]


def _section(tmp_path: Path, records: list[dict]):
    section = build_bench_section(bench_table(records), FigureFiles(tmp_path))
    assert section is not None
    return section


def test_a_weak_measured_speedup_is_a_measurement_to_repeat(tmp_path: Path) -> None:
    section = _section(tmp_path, _runs("m-small", 10**5, 60.0))
    top = next(a for a in section.answer if "measured speedup" in a)
    assert "0.60x" in top and "weak evidence" in top, top  # 60 over 100 samples/s
    assert "a measurement to repeat" in top and "a prediction to test" not in top, top
    # the findings on the runs; not the sentence on what they all rest on, which names
    # the model in the basis of the steps it asks and says what each kind of finding is
    measured = [
        f
        for f in section.findings
        if "m-small" in f and "weak evidence" in f and not f.startswith("What these findings")
    ]
    assert measured, section.findings
    for finding in measured:  # each reads the runs themselves: none a prediction
        assert "a measurement to repeat" in finding, finding
        assert "a prediction to test" not in finding, finding


def test_a_break_even_size_interpolated_from_weak_runs_is_a_prediction(tmp_path: Path) -> None:
    # the same family: slower at 0.1M parameters, faster at 10M: a crossing between
    records = _runs("mlp-small", 10**5, 60.0) + _runs("mlp-large", 10**7, 150.0)
    frame = bench_table(records)
    assert set(pd.unique(frame["family"])) == {"mlp"}  # the premise: one family
    section = _section(tmp_path, records)
    size = [f for f in section.findings if "break-even model size" in f]
    assert len(size) == 1, section.findings
    assert "a prediction to test" in size[0], size[0]
    best = [f for f in section.findings if f.startswith("Best scaling")]
    assert best and "a measurement to repeat" in best[0], best
