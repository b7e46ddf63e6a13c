"""The top of the report answers with the decision first: on an H100 host whose file also
holds a CPU/gloo model, the first line was "measured speedup over one device: mlp-4m
0.34x on 2 (CPU processes, gloo)" and the advice came second."""

from __future__ import annotations

from pathlib import Path

from gpuscale.advice.explain import answer
from gpuscale.advice.request import AdviceRequest
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.results import bench_table, read_results
from gpuscale.report.bench_advice import advice_on_bench
from gpuscale.report.bench_section import build_bench_section
from gpuscale.report.svg import FigureFiles

HERE = Path(__file__).parent


def test_the_decision_comes_first_and_each_measured_speedup_names_its_platform(
    tmp_path: Path,
) -> None:
    bench = bench_table(read_results(HERE / "h100_paths.jsonl")[0])
    advice = advice_on_bench(bench, AdviceRequest(interconnect="pcie-phb"))
    assert advice.advice is not None
    model = advice.advice.calibration.model.name
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=advice)
    assert section is not None
    # the first line of `gpuscale advise`'s own default view (issue 60: the same two views)
    decision = answer.lines(advice.advice)[0]
    assert section.answer[0] == f"Advice for {model}: {decision}"
    measured = [i for i, a in enumerate(section.said) if "measured speedup" in a]
    assert len(measured) == 1 and measured[0] > 0
    # each run measured at N > 1 is said with the device and backend it ran on
    scaling = bench_scaling(bench)
    line = section.said[measured[0]]
    for r in scaling[(scaling["accelerators"] > 1) & ~scaling["flagged"]].itertuples():
        # and the batch its speedup kept: at a growing global batch, no strong-scaling advice's
        said = f"{r.configuration} {r.speedup:.2f}x on {r.accelerators} ({r.platform}, "
        kept = {"weak": f"batch {r.batch_per_device:,} per device"}.get(
            r.scaling, f"global batch {r.global_batch:,}"
        )
        assert f"{said}{kept} at each count)" in line
