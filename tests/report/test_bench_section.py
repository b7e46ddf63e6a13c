"""The report's own-hardware section: findings follow the numbers; figures are written."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from markupsafe import escape
from typer.testing import CliRunner

from gpuscale.advice.explain import answer
from gpuscale.advice.request import AdviceRequest
from gpuscale.analysis.bench_scaling import bench_scaling, break_even_params
from gpuscale.bench.results import bench_table, read_results
from gpuscale.cli import app
from gpuscale.report.bench_advice import BenchAdvice, advice_on_bench
from gpuscale.report.bench_checks import ReadRun
from gpuscale.report.bench_figures import speedup_by_size
from gpuscale.report.bench_section import bench_findings, build_bench_section, measured_answer
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record
from ..golden import Golden
from ..mlperf.logbuilder import RoundBuilder

VIEW = "report/bench_section"
BREAKDOWN, PREDICTED = "bench_step_breakdown", "advice_predicted_scaling"  # figure files


def _advice(bench: pd.DataFrame, **fields: object) -> BenchAdvice:
    """The advice the report computes before its bench section (``--advise``)."""
    return advice_on_bench(bench, AdviceRequest(**fields))


def table(pairs: list[tuple[str, str, int, float, float]]) -> pd.DataFrame:
    rows = []
    for model, family, params, one, two in pairs:
        for world, sps in ((1, one), (2, two)):
            overhead = 1.5 if world == 2 else 0.0
            rows.append(
                bench_record(model, params, world, sps, family=family, sync_overhead_ms=overhead)
            )
    return bench_table(rows)


def test_break_even_sentence(golden: Golden) -> None:
    scaling = bench_scaling(table([("a", "mlp", 10**5, 100, 50), ("b", "mlp", 10**7, 100, 150)]))
    assert break_even_params(scaling, 2) == pytest.approx(1e6)  # log-midpoint of 0.5 -> 1.5
    golden.check(VIEW, "break-even between two models", "\n".join(bench_findings(scaling)))


def test_break_even_counts_a_flagged_run_the_advice_reads() -> None:
    """The size is interpolated from the runs the findings count: a flagged run the
    advice reads makes the crossing with an unflagged one; left out, none crosses."""
    scaling = bench_scaling(table([("a", "mlp", 10**5, 100, 50), ("b", "mlp", 10**7, 100, 150)]))
    b_two = scaling.index[(scaling["model"] == "b") & (scaling["accelerators"] == 2)]
    scaling.loc[b_two, "flagged"] = True
    assert break_even_params(scaling, 2) is None
    assert break_even_params(scaling, 2, read=b_two) == pytest.approx(1e6)
    read = (ReadRun(b_two[0], "b", 2, 1.5, flagged=True, use="the only run there"),)
    text = " ".join(bench_findings(scaling, read))
    assert "break-even model size is 1M parameters" in text


def test_mixed_without_crossing() -> None:
    scaling = bench_scaling(table([("a", "mlp", 10**5, 100, 50), ("t", "tf", 10**6, 100, 150)]))
    text = " ".join(bench_findings(scaling))
    assert "a trains slower" in text and "t faster" in text


def test_all_slower_and_files(tmp_path: Path, golden: Golden) -> None:
    bench = table([("a", "mlp", 10**5, 100, 50), ("b", "mlp", 10**6, 100, 60)])
    assert break_even_params(bench_scaling(bench), 2) is None  # both slower on 2
    section = build_bench_section(bench, FigureFiles(tmp_path, png=True))
    assert section is not None
    golden.check(VIEW, "two models, both slower on 2", "\n".join(section.findings))
    assert (tmp_path / f"{BREAKDOWN}.png").exists() and (tmp_path / f"{BREAKDOWN}.svg").exists()
    assert len(section.rows) == 4 and section.rows[0]["Model"] == "a"


def test_advice_adds_predictions(tmp_path: Path) -> None:
    bench = table([("a", "mlp", 10**5, 100, 50), ("b", "mlp", 10**6, 100, 60)])
    section = build_bench_section(
        bench, FigureFiles(tmp_path), advice=_advice(bench, interconnect="pcie-phb", max_devices=4)
    )
    assert any(f.startswith("Advice for b:") for f in section.findings)
    assert (tmp_path / f"{PREDICTED}.svg").exists()


def test_flagged_runs_are_shown_with_their_reason_and_left_out(
    tmp_path: Path, golden: Golden
) -> None:
    rows = [
        bench_record("a", 10**5, 1, 100.0),
        bench_record("a", 10**5, 2, 150.0, sync_overhead_ms=1.0),
        bench_record("b", 10**6, 1, 100.0),
        {**bench_record("b", 10**6, 2, 190.0), "flags": ["noisy steps: p95 2x the median"]},
    ]
    section = build_bench_section(bench_table(rows), FigureFiles(tmp_path))
    text = " ".join(section.findings)
    assert "1.50x" in text and "1.90x" not in text  # not b's untrustworthy 1.9x
    golden.check(VIEW, "a flagged run left out", "\n".join(section.findings))
    reasons = [r["Not trusted because"] for r in section.rows]
    assert any("noisy steps" in r for r in reasons)


EVIL = "[bold]x[/bold] <script>alert(1)</script>"


def _with_failed_and_flagged(path: Path) -> None:
    busy = ["machine busy: other processes used 60% of its CPU time"]
    rows = [
        {**bench_record("a", 10**5, 1, 100.0), "flags": busy},
        {**bench_record("a", 10**5, 2, 150.0, sync_overhead_ms=1.0), "flags": busy},
        bench_record("evil:make", 10**5, 2, 0.0, status="error", error=f"{EVIL}\nTraceback"),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_runs_that_did_not_measure_are_listed(tmp_path: Path) -> None:
    path = tmp_path / "b.jsonl"
    _with_failed_and_flagged(path)
    section = build_bench_section(bench_table(read_results(path)[0]), FigureFiles(tmp_path))
    (failed,) = section.failed
    # the model, its count and its error's first line only, as written
    assert failed.startswith("evil:make on 2") and failed.endswith(f"error: {EVIL}")
    only_failed = bench_table(read_results(path)[0]).query("status != 'ok'")
    assert build_bench_section(only_failed, FigureFiles(tmp_path)).failed == section.failed


def test_advice_asked_of_runs_that_all_failed_is_refused_with_why(
    tmp_path: Path, golden: Golden
) -> None:
    path = tmp_path / "b.jsonl"
    _with_failed_and_flagged(path)
    failed = bench_table(read_results(path)[0]).query("status != 'ok'")
    section = build_bench_section(
        failed, FigureFiles(tmp_path), advice=_advice(failed, interconnect="pcie-phb")
    )
    assert section.advice_refused is not None
    golden.check(VIEW, "advice refused: every run failed", section.advice_refused)
    assert build_bench_section(failed, FigureFiles(tmp_path)).advice_refused is None


def test_report_lists_failed_runs_escaped_and_takes_allow_flagged(
    tmp_path: Path, golden: Golden
) -> None:
    root = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [3, 2, 4])
    bench = tmp_path / "b.jsonl"
    _with_failed_and_flagged(bench)
    args = ["report", str(root.write_dir(tmp_path)), "--bench", str(bench), "--advise"]
    refused = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "r1")])
    # written, without the advice asked for: said on stderr with advise's own reason, and
    # a non-zero status as `advise --bench` gives on the same file (2: nothing advised)
    advise = CliRunner().invoke(app, ["advise", "--bench", str(bench)])
    assert advise.exit_code == 2
    assert refused.exit_code == 1, refused.output
    reason = " ".join(advise.stderr.removeprefix("error: ").split())
    assert reason in " ".join(refused.stderr.split())  # advise's own reason
    said = " ".join(f"{refused.stdout} {refused.stderr}".split())
    assert said.count(reason) == 1  # once, on stderr: not again in the headline
    paths = {str(tmp_path): "<tmp>"}
    golden.check(VIEW, "advise: every N = 1 run flagged", advise.stderr, paths=paths)
    (warning,) = [line for line in refused.stderr.splitlines() if line.startswith("warning:")]
    golden.check(VIEW, "report: the advice refused", warning)
    assert (tmp_path / "r1" / "index.html").exists() and str(tmp_path / "r1") in refused.stdout
    html = (tmp_path / "r1" / "index.html").read_text()
    assert "No advice:" in html and "--allow-flagged" in html
    assert "<script>alert" not in html and escape(EVIL) in html  # the failed run
    allowed = CliRunner().invoke(app, [*args, "--allow-flagged", "--out", str(tmp_path / "r2")])
    assert allowed.exit_code == 0, allowed.output
    html = (tmp_path / "r2" / "index.html").read_text()
    assert "No advice:" not in html and "2 flagged runs used" in html


def test_nothing_measured_is_one_warning_with_the_advice_asked(tmp_path: Path) -> None:
    root = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [3, 2, 4])
    bench = tmp_path / "b.jsonl"
    rows = [bench_record("a", 10**5, n, 0.0, status="error", error="boom") for n in (1, 2)]
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    args = ["report", str(root.write_dir(tmp_path)), "--bench", str(bench), "--advise"]
    done = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "r")])
    assert done.exit_code == 1, done.output
    warnings = [line for line in done.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "advice" in warnings[0]
    assert "both runs failed" in warnings[0] and "says why each did" in warnings[0]
    bench.write_text(json.dumps(rows[0]) + "\n")  # one run: said as one, never "all 1 failed"
    done = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "r1")])
    assert "the run failed" in done.stderr and "says why it did" in done.stderr, done.stderr
    assert "the run failed (its cause" in done.stdout and "mend it and" in done.stdout


def test_the_summary_counts_models_and_devices_in_words(golden: Golden) -> None:
    from gpuscale.analysis.bench_scaling import bench_scaling
    from gpuscale.bench.results import bench_table, read_results
    from gpuscale.report.bench_section import bench_findings

    from ..builders import bench_record

    one = bench_findings(bench_scaling(bench_table([bench_record("m", 2 * 10**5, 1, 1000.0)])))
    golden.check(VIEW, "summary: one model on one device", one[0])
    rows = [
        bench_record("m", 2 * 10**5, 1, 1000.0),
        bench_record("m", 2 * 10**5, 2, 1900.0),
        bench_record("k", 10**6, 1, 900.0),
        bench_record("k", 10**6, 2, 1700.0),
    ]
    two = bench_findings(bench_scaling(bench_table(rows)))
    golden.check(VIEW, "summary: two models on 1 and 2 devices", two[0])
    # one configuration run twice (real H100 rows): one configuration, and the device named
    h100 = Path(__file__).parents[1] / "advice" / "h100_resnet50_bf16.jsonl"
    twice = bench_findings(bench_scaling(bench_table(read_results(h100)[0])))
    device = read_results(h100)[0][0]["environment"]["device_name"]
    assert "configurations" not in twice[0] and device in twice[0], twice[0]
    golden.check(VIEW, "summary: one configuration run twice", twice[0])


def test_a_share_range_that_rounds_alike_is_one_share() -> None:
    import pandas as pd

    from gpuscale.report.bench_words import _share_range

    assert _share_range(pd.Series([0.471, 0.468])) == "47%"
    assert _share_range(pd.Series([0.12, 0.47])) == "12%-47%"


def test_report_of_a_file_with_one_model_run_twice(tmp_path: Path) -> None:
    """The README's bench line then docs/measure.md's into one file: the same model twice.
    `report --bench` wrote nothing (ValueError); now every run has its own, distinct row."""
    root = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [3, 2, 4])
    bench = tmp_path / "b.jsonl"
    records = [
        bench_record("m", 10**6, n, rate, sweep_id=sweep)
        for sweep, rates in (("s1", (100.0, 150.0)), ("s2", (110.0, 90.0)))
        for n, rate in zip((1, 2), rates, strict=True)
    ]
    bench.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "r"
    args = ["report", str(root.write_dir(tmp_path)), "--bench", str(bench), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    section = build_bench_section(bench_table(read_results(bench)[0]), FigureFiles(tmp_path))
    assert section is not None
    rows = {(r["Model"], r["Devices"]) for r in section.rows}
    assert rows == {(f"m (run {k})", n) for k in (1, 2) for n in ("1", "2")}


def _advised_with_a_flagged_rerun() -> pd.DataFrame:
    """b measured twice: a trusted 1.2x at N = 2, then a flagged 0.1x (a busy machine)."""
    busy = ["machine busy: other processes used 90% of its CPU time"]
    rows = [
        bench_record("a", 10**5, 1, 100.0, sweep_id="s1"),
        bench_record("a", 10**5, 2, 150.0, sync_overhead_ms=1.0, comm_ms=2.0, sweep_id="s1"),
        bench_record("b", 10**6, 1, 100.0, sweep_id="s1"),
        bench_record("b", 10**6, 2, 120.0, sync_overhead_ms=1.0, comm_ms=4.0, sweep_id="s1"),
        bench_record("b", 10**6, 1, 100.0, sweep_id="s2"),
        {**bench_record("b", 10**6, 2, 10.0, comm_ms=4.0, sweep_id="s2"), "flags": busy},
    ]
    return bench_table(rows)


def test_the_advice_is_checked_against_each_measured_run(tmp_path: Path, golden: Golden) -> None:
    """Every measured N = 2 run of the advised model is set against the advice's 80%
    interval in words, flagged ones said flagged; the top lines carry the decision and
    those checks, and a result only from trusted runs."""
    bench = _advised_with_a_flagged_rerun()
    section = build_bench_section(
        bench, FigureFiles(tmp_path), advice=_advice(bench, interconnect="pcie-phb", max_devices=4)
    )
    checks = [f for f in section.said if f.startswith("Measured b")]
    assert len(checks) == 2, section.findings
    flagged = [c for c in checks if "left out" in c]
    assert len(flagged) == 1 and "0.10x" in flagged[0]
    assert "OUTSIDE" in flagged[0]  # 0.1x: far below any advice
    # the interval a run is held against is the throughput one (no convergence factor),
    # said so: the decision's own interval (time to train) differs
    assert all("throughput interval" in c for c in checks)
    golden.check(VIEW, "each measured run against the advice", "\n".join(checks))
    measured = [a for a in section.said if a.startswith("Your hardware")]
    assert not any("0.10" in m for m in measured)  # flagged: no measured answer
    # one line on the advised model's runs; model a's run is said apart, as another model's
    (own,) = [m for m in measured if "(b on " in m]
    (other,) = [m for m in measured if m is not own]
    assert "a 1.50x on 2" in other and "another model" in other
    golden.check(VIEW, "measured answers: the advised model's, another's", "\n".join(measured))
    assert section.answer[0].startswith("Advice for b: ") and checks[0] in section.answer


def test_only_flagged_multi_device_runs_give_no_measured_answer(golden: Golden) -> None:
    busy = ["machine busy: other processes used 90% of its CPU time"]
    rows = [
        bench_record("a", 10**5, 1, 100.0),
        {**bench_record("a", 10**5, 2, 150.0), "flags": busy},
    ]
    answer = measured_answer(bench_scaling(bench_table(rows)))
    assert "1 flagged" in answer and "1.5" not in answer
    golden.check(VIEW, "measured answer: only flagged runs on 2", answer)


def test_flagged_points_are_drawn_hollow_and_labelled(golden: Golden) -> None:
    scaling = bench_scaling(_advised_with_a_flagged_rerun())
    chart = speedup_by_size(scaling)
    ax = chart.figure.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any(text.startswith("flagged") for text in legend)
    (label,) = chart.labels["points-flagged"]
    assert "machine busy" in label  # the flag's reason
    golden.check(VIEW, "the flagged point's legend and label", "\n".join([*legend, label]))
    assert len(chart.labels["points-2"]) == 2  # a and b's trusted run only
    hollow = next(c for c in ax.collections if c.get_gid() == "points-flagged")
    assert hollow.get_facecolor().size == 0 or hollow.get_facecolor()[0][3] == 0


def test_report_puts_your_hardware_first(tmp_path: Path, golden: Golden) -> None:
    root = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [3, 2, 4])
    bench = tmp_path / "b.jsonl"
    records = [
        bench_record("m", 10**6, n, rate, comm_ms=2.0, sync_overhead_ms=1.0 * (n > 1))
        for n, rate in ((1, 100.0), (2, 150.0))
    ]
    bench.write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "r"
    args = ["report", str(root.write_dir(tmp_path)), "--bench", str(bench), "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--advise", "--interconnect", "pcie-phb"])
    assert result.exit_code == 0, result.output
    html = (out / "index.html").read_text()
    order = ['id="own-answer"', 'id="answer"', 'id="bench"', 'id="v4.1-bert"']
    positions = [html.index(marker) for marker in order]
    assert positions == sorted(positions)
    top = html[positions[0] : positions[1]]
    # the run advised on, said as of the advice's model and platform
    assert "m 1.50x on 2" in top and "Advice for m" in top and "(m on CPU" in top
    answer = top[top.index('<ul class="findings own-answer">') :].split("</ul>")[0]
    golden.check(VIEW, "report: your hardware's answer first", answer)
    # what the speedups are against, in the CLI's words (N = 1 rows measure below 1x
    # against one device's throughput, so the basis is the plain N = 1 step)
    assert escape("Speedup and Efficiency (N > 1 only): against the plain N = 1 step") in html


def test_the_top_gives_the_decision_not_the_flagged_warning(tmp_path: Path, golden: Golden) -> None:
    bench = _advised_with_a_flagged_rerun()
    advice = _advice(bench, interconnect="pcie-phb", max_devices=4, allow_flagged=True)
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=advice)
    top = section.answer[0]
    assert top.startswith("Advice for b (") and "--allow-flagged" in top
    assert "WARNING" not in top
    assert any("used by the advice" in line for line in section.answer)
    golden.check(VIEW, "top: advice from flagged runs", "\n".join(section.answer))
    # then `gpuscale advise`'s default view, line for line (the same two views);
    # what qualifies the decision (Advice.caveats) behind it, as --explain gives it
    short = answer.lines(advice.advice)
    assert section.answer[1 : len(short)] == short[1:]
    assert any(line.startswith("Advice for b: ") and "Provisional" in line for line in section.more)
    assert not any("Provisional" in line for line in section.answer)


def test_the_section_is_given_the_advice_and_computes_none(tmp_path: Path, monkeypatch) -> None:
    """The advice is computed before the section (``report.bench_advice``): with it given,
    drawing the section calls nothing of the advice."""
    bench = table([("a", "mlp", 10**5, 100, 50), ("b", "mlp", 10**6, 100, 60)])
    given = _advice(bench, interconnect="pcie-phb", max_devices=4)

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the bench section called advise")

    monkeypatch.setattr("gpuscale.advice.api.advise", refuse)
    monkeypatch.setattr("gpuscale.report.bench_advice.advise_loaded", refuse)
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=given)
    assert any(f.startswith("Advice for b:") for f in section.findings)


def test_a_file_without_a_one_device_run_is_reported_without_its_speedup_figure(
    tmp_path: Path, golden: Golden
) -> None:
    """docs/interconnect.md's two-node bench writes N = 2 rows only: the speedup figure
    (an empty log axis) is left out and its place says why, the rest of the report is
    written."""
    rows = [bench_record(m, p, 2, 100.0, comm_ms=1.0) for m, p in (("a", 10**5), ("b", 10**6))]
    section = build_bench_section(bench_table(rows), FigureFiles(tmp_path))
    assert section is not None
    (title,) = [t for t, _, _ in section.figures]  # the step breakdown only
    (why,) = [line for line in section.findings if "not drawn" in line]
    golden.check(VIEW, "no N = 1 run: the figure drawn, the one left out", f"{title}\n{why}")
    bench = tmp_path / "two.jsonl"
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r"
    result = CliRunner().invoke(app, ["report", "--bench", str(bench), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert escape(why.split("`")[0]) in (out / "index.html").read_text()


def test_the_advice_in_the_report_says_whose_options_it_names(tmp_path: Path) -> None:
    """The advice tells to "give --samples" or "--power-w", options of `gpuscale advise`
    the report has not (a user walk): the section says so and how to use them."""
    bench = table([("a", "mlp", 10**5, 100, 50), ("b", "mlp", 10**6, 100, 60)])
    advice = _advice(bench, interconnect="pcie-phb", max_devices=4)
    assert advice.advice is not None
    named = [line for line in advice.advice.explanation if "--samples" in line]
    assert named, advice.advice.explanation  # the default samples, said with their option
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=advice)
    assert section is not None
    said = [f for f in section.findings if "are `gpuscale advise`'s" in f]
    assert len(said) == 1 and "--allow-flagged" in said[0]


def test_a_broken_model_is_never_advised_on_in_the_report(tmp_path: Path) -> None:
    """--allow-flagged in the report admits no run of a model whose loss was not finite:
    asked for, no advice and the fix said; beside a sound model, the sound one is advised
    on and the top does not call it "from flagged runs" (none of its runs was flagged)."""
    nan = ["loss not finite: nan at the last timed step, so the model trains nothing"]
    rows = [
        bench_record("a", 10**5, 1, 100.0),
        bench_record("a", 10**5, 2, 150.0, sync_overhead_ms=1.0, comm_ms=2.0),
        {**bench_record("b", 10**6, 1, 100.0), "flags": nan},
        {**bench_record("b", 10**6, 2, 120.0, comm_ms=4.0), "flags": nan},
    ]
    bench = bench_table(rows)
    asked = _advice(bench, interconnect="pcie-phb", model="b", allow_flagged=True)
    assert asked.advice is None and "b is broken" in str(asked.refused)
    assert "fix the model" in str(asked.refused).lower()
    given = _advice(bench, interconnect="pcie-phb", max_devices=4, allow_flagged=True)
    assert given.advice is not None and given.advice.calibration.model.name == "a"
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=given)
    top = section.answer[0]
    assert top.startswith("Advice for a: ") and "from flagged runs" not in top


def test_a_flagged_run_the_advice_rests_on_is_said_used_not_left_out(tmp_path: Path) -> None:
    """The only 2-device run is flagged and far below the prediction: the advice rests on
    it (its disagreement, the one record of which runs the advice used). The report's top
    lines say so both where the advice speaks and where the run is checked, never "left
    out of the advice" beside "rests on the measurement"; the run is held against the
    model's interval it replaced, not against its own value."""
    busy = ["machine busy: other processes used 60% of its CPU time during the timed steps"]
    rows = [
        bench_record("b", 6_870_000, 1, 8 / 0.061, forward_ms=20.0, backward_ms=40.0),
        {
            **bench_record("b", 6_870_000, 2, 0.11 * 8 / 0.061, forward_ms=20.0, backward_ms=40.0),
            "flags": busy,
        },
    ]
    bench = bench_table(rows)
    given = _advice(bench, interconnect="nvlink3", max_devices=4)
    (found,) = given.advice.disagreements
    assert found.why == "flagged_only"  # the advice rests on the flagged run
    section = build_bench_section(bench, FigureFiles(tmp_path), advice=given)
    top = " ".join(section.answer)
    assert "rests on the measurement" in top
    assert "left out of the advice" not in top
    (check,) = [line for line in section.answer if line.startswith("Measured b on 2")]
    assert "flagged, the advice rests on it (the only run there)" in check
    assert "nan" not in check and "OUTSIDE the model's 80% throughput interval" in check
    assert f"{found.predicted_low:.2f}"[:3] in check  # the interval it replaced
    assert section.answer[0].startswith("Advice for b (from flagged runs: less certain): ")


def test_a_report_of_bench_runs_that_all_failed_says_so_first_and_exits_1(
    tmp_path: Path,
) -> None:
    """``report --bench`` of a file whose every run failed said only the MLPerf answer,
    exit 0, its page an empty table of headers with the one line saying so collapsed: the
    hardware asked about leads, saying how many runs failed, the table is left out and the
    status is 1 (written, without the section's numbers), as ``analyze --bench`` exits 1."""
    root = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [3, 2, 4])
    bench = tmp_path / "b.jsonl"
    rows = [
        bench_record(f"m{k}:make", 10**5, n, 0.0, status="error", error="cannot build")
        for k, n in ((1, 1), (1, 2), (2, 1))
    ]
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "r"
    args = ["report", str(root.write_dir(tmp_path)), "--bench", str(bench), "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    head = result.stdout.splitlines()[1]
    assert head.startswith("Your hardware: no run") and "all 3 runs failed" in head, result.stdout
    assert "warning: " in result.stderr and "3 runs failed" in result.stderr
    html = (out / "index.html").read_text()
    section = html[html.index('id="bench"') :]
    section = section[: section.index("</section>")]
    assert "<table" not in section and section.count("<li>") >= 3
    assert "all 3 runs failed" in section.split("Runs that did not measure")[0]
