"""The report's bench section says what its findings rest on as the CLI does (the bench
table's ``evidence`` grade and ``evidence_notes``), and sets a measured run against the
advice's prediction of the same configuration only.

A new user's 2-step quickstart read "mlp-0.2m on 2 devices: 0.45x (efficiency 23%)" as a
finding, the word "weak" nowhere in the report while ``gpuscale bench`` graded both rows
weak; and with ``--advise`` the weak-scaling run (8 per device, global batch 16) was said
"(trusted, weak evidence), inside the advice's 80% throughput interval (0.037-1.93x)", the
interval of strong scaling (4 per device, global batch 8) and 52x wide."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from gpuscale.advice.request import AdviceRequest
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.report.bench_advice import advice_on_bench
from gpuscale.report.bench_section import build_bench_section
from gpuscale.report.svg import FigureFiles
from gpuscale.tables.advice import as_throughput

from ..builders import bench_record


def _runs(model: str, params: int, steps: int, two: float, batch: int = 8) -> list[dict]:
    """``model`` on 1 and 2 devices (100 and ``two`` samples/s), ``steps`` timed steps
    each (2: weak, few steps; 400 of 3.5 ms: 1.4 s timed, strong)."""
    config = BenchConfig(steps=steps, batch=batch)
    return [
        bench_record(model, params, n, sps, config=config, batch=batch, sync_overhead_ms=s)
        for n, sps, s in ((1, 100.0, 0.0), (2, two, 1.0))
    ]


def _mixed() -> pd.DataFrame:
    """m-many (400 steps: strong) and m-few (2 steps: weak) on 1 and 2 devices."""
    return bench_table(_runs("m-many", 10**6, 400, 150.0) + _runs("m-few", 10**5, 2, 60.0))


def _names(sentence: str, model: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(model)}(?![\w-])", sentence) is not None


def test_every_finding_on_a_weak_row_says_weak_as_the_table_grades_it(tmp_path: Path) -> None:
    bench = _mixed()
    graded = bench_scaling(bench).set_index("configuration")
    # the table's own grades, read before the report: the premise of the test
    assert set(graded.loc["m-few", "evidence"]) == {"weak"}
    assert set(graded.loc["m-many", "evidence"]) == {"strong"}
    section = build_bench_section(bench, FigureFiles(tmp_path))
    assert section is not None
    about = {m: [f for f in section.findings if _names(f, m)] for m in graded.index.unique()}
    assert about["m-few"], section.findings  # findings on the weak model exist...
    for finding in about["m-few"]:  # ...and each says weak: a measurement to repeat, or
        # a prediction to test where it derives a figure (the interpolated break-even size)
        derived = "interpolated" in finding
        said = "a prediction to test" if derived else "a measurement to repeat"
        assert "weak evidence" in finding and said in finding, finding
    # findings from strong runs only are no weaker than their runs (a sentence reading
    # both models, "best of the 2 measured", rests on the weak one too)
    strong = build_bench_section(bench[bench["model"] == "m-many"], FigureFiles(tmp_path))
    assert strong is not None and about["m-many"]
    assert not any("weak" in f for f in strong.findings), strong.findings
    # once, what they rest on and what would make them firm (the steps the advice asks)
    rests = [f for f in section.findings if f.startswith("What these findings rest on")]
    assert len(rests) == 1 and "2 of the 4 runs are weak evidence: few steps timed" in rests[0]
    assert re.search(
        r"bench with --steps \d+ or more( \((?:[^()]|\([^()]*\))*\))? to make it firm", rests[0]
    )
    # the table: each row's grade and, where weak, the bench table's own notes
    for row, (_, r) in zip(section.rows, bench_scaling(bench).iterrows(), strict=True):
        said = row["Evidence"]
        assert said.split(":")[0] == r["evidence"]
        assert r["evidence_notes"] in said
    # the top of the report: the weak run's speedup said weak, the strong one's not
    top = next(a for a in section.said if "measured speedup" in a)
    few = next(part for part in top.split("; ") if "m-few" in part)
    many = next(part for part in top.split("; ") if "m-many" in part)
    assert "weak evidence" in few and "weak" not in many


def test_a_run_is_checked_against_the_prediction_of_its_own_configuration(
    tmp_path: Path,
) -> None:
    """Benched at 8 per device on 1 and 2 devices (global batch 16 at N = 2): the advice
    keeps the global batch 8 (4 per device at N = 2) and predicts the weak-scaling
    alternative beside it; the run is set against the alternative's row, never the
    strong-scaling one: here the model's interval for it, which the row resting on the
    run (outside it) replaced."""
    bench = bench_table(_runs("m", 10**6, 2, 60.0))
    given = advice_on_bench(bench, AdviceRequest(interconnect="pcie-phb", max_devices=2))
    assert given.advice is not None and given.advice.alternative is not None
    strong = as_throughput(given.advice.predictions).set_index("accelerators").loc[2]
    weak = as_throughput(given.advice.alternative).set_index("accelerators").loc[2]
    assert (strong["batch_per_device"], weak["batch_per_device"]) == (4, 8)  # the premise
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=given)
    checks = [f for f in section.said if f.startswith("Measured m on 2")]
    assert len(checks) == 1
    check = checks[0]
    assert "per-device batch 8, global batch 16" in check
    (found,) = given.advice.disagreements  # the row rests on the one run: no interval
    assert weak["rests_on"] == "measured" and pd.isna(weak["speedup_low"])
    assert (found.accelerators, found.batch_per_device) == (2, 8)
    interval = f"{found.predicted_low:.2g}-{found.predicted_high:.2g}x"
    assert f"OUTSIDE the model's 80% throughput interval for this configuration ({interval}" in (
        check
    ), check
    assert "nan" not in check
    # one grading vocabulary, the bench table's: a weak run is never "trusted"
    assert "trusted" not in check and "weak evidence" in check


def test_a_configuration_the_advice_does_not_predict_is_said_and_not_compared(
    tmp_path: Path,
) -> None:
    """With --global-batch 8 the advice predicts 4 per device at N = 2 and no
    alternative: the run of 8 per device is not compared with it."""
    bench = bench_table(_runs("m", 10**6, 400, 150.0))
    request = AdviceRequest(interconnect="pcie-phb", max_devices=2, global_batch=8)
    given = advice_on_bench(bench, request)
    assert given.advice is not None and given.advice.alternative is None
    assert set(given.advice.predictions["batch_per_device"]) == {8, 4}  # the premise
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=given)
    checks = [f for f in section.said if f.startswith("Measured m on 2")]
    assert len(checks) == 1
    assert "not compared: the advice predicts no run of this configuration" in checks[0]
    assert "interval" not in checks[0] and "strong evidence" in checks[0]
    # nor drawn over it: the figure says the run is of another configuration
    (caption,) = [t for t, _, _ in section.figures if t.startswith("Predicted throughput")]
    assert "per-device batch 8 -> 4" in caption
    assert "the measured run at N > 1 not drawn: of another configuration" in caption
    (svg,) = [g for t, g, _ in section.figures if t == caption]
    assert "points-measured" not in svg


def test_the_figure_draws_the_prediction_of_the_measured_configuration(tmp_path: Path) -> None:
    bench = bench_table(_runs("m", 10**6, 2, 60.0))
    given = advice_on_bench(bench, AdviceRequest(interconnect="pcie-phb", max_devices=2))
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=given)
    (caption, svg) = next((t, g) for t, g, _ in section.figures if t.startswith("Predicted"))
    # the weak-scaling alternative (8 per device at every count), the measured run on it
    assert "(per-device batch 8 kept, the global batch growing" in caption
    assert "not drawn" not in caption
    assert "points-measured" in svg


def test_the_figure_and_the_answer_each_say_which_scaling_they_are(tmp_path: Path) -> None:
    """The answer quotes the advice's strong scaling (global batch 8 kept: 4 per device at
    2); the figure beside it draws the weak-scaling alternative (8 per device, the runs'
    configuration) with another speedup at 2 devices, and neither said which it was."""
    bench = bench_table(_runs("m", 10**6, 2, 60.0))
    given = advice_on_bench(bench, AdviceRequest(interconnect="pcie-phb", max_devices=2))
    advice = given.advice
    assert advice is not None and advice.alternative is not None
    # the premise: the advice keeps the global batch, its alternative the per-device one
    assert set(advice.predictions["global_batch"]) == {8}
    assert set(advice.alternative["batch_per_device"]) == {8}
    strong = float(advice.predictions.set_index("accelerators").loc[2, "speedup"])
    weak = float(advice.alternative.set_index("accelerators").loc[2, "speedup"])
    assert abs(strong - weak) > 0.01
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=given)
    (caption, svg) = next((t, g) for t, g, _ in section.figures if t.startswith("Predicted"))
    assert ", weak scaling (per-device batch 8 kept" in caption
    assert "the advice above is strong scaling (global batch 8 kept, per-device batch 8 -> 4)" in (
        caption
    )
    texts = re.findall(r"<text\b[^>]*>([^<]*)</text>", svg)
    legend = [t for t in texts if t.startswith("predicted")]
    assert legend == ["predicted, weak scaling"], legend


def _predicted(low: float, high: float) -> pd.DataFrame:
    """A throughput prediction table (``as_throughput``'s columns the check reads): one
    device, then 2 devices of the same per-device batch 8, speedup ``low``-``high``."""
    return pd.DataFrame(
        {
            "accelerators": [1, 2],
            "batch_per_device": [8, 8],
            "accum": [1, 1],
            "speedup": [1.0, (low * high) ** 0.5],
            "speedup_low": [1.0, low],
            "speedup_high": [1.0, high],
        }
    )


def test_an_interval_too_wide_to_test_is_said_so_never_inside() -> None:
    from gpuscale.report.bench_checks import TOO_WIDE_TO_TEST, checks

    scaling = bench_scaling(bench_table(_runs("m", 10**6, 400, 90.0)))
    measured = scaling[scaling["model"] == "m"]
    speedup = float(measured["speedup"].dropna().iloc[0])  # 0.9x
    wide = _predicted(0.037, 1.93)  # the user's 52x interval, holding 0.9
    assert TOO_WIDE_TO_TEST < 1.93 / 0.037 and 0.037 < speedup < 1.93
    (check,) = checks([wide], measured, measured["configuration"], scaling)
    line = check.line
    assert "too wide to test the prediction" in line and "inside" not in line
    assert f"within a factor of {TOO_WIDE_TO_TEST:g}" in line
    narrow = _predicted(speedup / 1.2, speedup * 1.2)  # a 1.44x interval: a test
    (check,) = checks([narrow], measured, measured["configuration"], scaling)
    line = check.line
    assert "inside the advice's 80% throughput interval" in line
