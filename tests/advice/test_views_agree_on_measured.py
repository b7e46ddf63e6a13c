"""The answer, its table, ``--explain``, ``-f json`` and the report's check say one figure
for a count the bench measured: the advice's one record of it
(``decision.measured_counts``). A walk: a 2-device run of 16 samples in 3 ms, beside a
one-device step the model predicts at 1.064 ms and a bare step the bench timed at
1.622 ms, read 1.08x in the decision (inside the predicted 0.904-1.65x: no disagreement in
``-f json``, none in the answer) and 0.709x "outside" in ``--explain`` and the report's
check (on the model's one-device step); an FSDP file said 1.21x in the answer, 2.78x
"outside" in ``--explain`` and 1.02x in ``analyze --bench`` for its 2 devices."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.calibration import FamilyBasis
from gpuscale.advice.derived import SMALLEST_SEARCHED, BreakEven
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.model.step import Compute
from gpuscale.analysis.bench_scaling import bench_scaling
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import load_bench
from gpuscale.bench.results_file import append_result
from gpuscale.cli import app
from gpuscale.report.bench_checks import checks
from gpuscale.tables.advice import as_throughput

from ..builders import bench_record
from ..golden import Golden

BATCH, ONE_MS, BARE_MS = 8, 1.064, 1.622  # the model's one-device step, the bench's bare one
MEASURED = re.compile(r"Measured on 2 devices, [^:]*: throughput speedup ([\d.]+)x?")
CHECKED = re.compile(r"Measured m on 2 devices \([^)]*\): ([\d.]+)x")


def _file(tmp_path: Path, run_ms: float) -> Path:
    """N = 1: phases 1.064 ms apart, DDP's step 1.664 ms, the bare step 1.622 ms; N = 2:
    16 samples in ``run_ms``, flagged (its wait beyond the communication in flight)."""
    path = tmp_path / "results.jsonl"
    config = BenchConfig(steps=400, batch=BATCH)
    phases = {"forward_ms": 0.2, "backward_ms": 0.4, "optimizer_ms": ONE_MS - 0.6}
    one = BATCH / (1.664 / 1e3)
    two = 2 * BATCH / (run_ms / 1e3)
    for n, rate, more in (
        (1, one, {"plain_step_ms": BARE_MS, "sync_overhead_ms": 0.6}),
        (2, two, {"sync_overhead_ms": 3.0, "comm_ms": 1.0}),
    ):
        append_result(path, bench_record("m", 10**5, n, rate, config=config, **phases, **more))
    return path


def _run(path: Path, *more: str) -> str:
    args = ["advise", "--bench", str(path), "--max-devices", "2", "--allow-flagged", *more]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "100"})
    assert result.exit_code == 0, result.output
    return result.output.replace("\n  ", " ")  # a wrapped line read whole


@pytest.mark.parametrize("run_ms", [3.0, 4.541])
def test_every_view_says_the_json_figure_of_a_measured_count(tmp_path: Path, run_ms: float) -> None:
    path = _file(tmp_path, run_ms)
    doc = json.loads(_run(path, "-f", "json"))
    (count,) = doc["measured"]
    figure = count["measured_speedup"]
    assert count["accelerators"] == 2
    # over the N = 1 no-sync step (DDP's 1.664 ms less its own 0.6 ms), the one device the
    # prediction models (its phases, ONE_MS), not analyze --bench's ratio over the bare step
    assert count["basis"] == ["nosync"]  # the bases, a list in JSON
    assert figure == pytest.approx(2 * ONE_MS / run_ms, rel=1e-6)
    outside = [d for d in doc["disagreements"] if d["accelerators"] == 2]
    assert bool(outside) is not count["inside"]
    assert [d["measured"]["speedup"] for d in outside] in ([], [figure])
    # the default view says it first where it is outside, --explain wherever it says it
    for explain, view in ((False, _run(path)), (True, _run(path, "--explain"))):
        said = [float(m.group(1)) for m in MEASURED.finditer(view)]
        assert said or (count["inside"] and not explain), view
        assert said == pytest.approx([figure] * len(said), rel=5e-3), view
    explained = _run(path, "--explain")
    assert MEASURED.search(explained), explained
    assert ("outside the predicted" in explained) is not count["inside"], explained
    # the report's check of the run: the same figure, on the same side of the interval
    advice = gpuscale.advise(bench=str(path), max_devices=2, allow_flagged=True)
    scaling = bench_scaling(load_bench(path).table)
    multi = scaling[scaling["accelerators"] == 2]
    frames = [as_throughput(advice.predictions), as_throughput(advice.alternative)]
    (check,) = checks(frames, multi, pd.Series(["m"]), scaling, allowed=True)
    reported = CHECKED.search(check.line)
    assert reported and float(reported.group(1)) == pytest.approx(figure, abs=5e-3), check.line
    assert check.outside is not count["inside"]


def test_the_family_sentence_says_the_tables_speedup_beside_the_throughputs(
    golden: Golden,
) -> None:
    """A CPU walk (mlp-1m, DDP, a convergence model measured): "this model's own measured
    step gives 1.42x on 2 devices (its table)" where its table said 0.981x (the
    throughput's 1.42x times a convergence factor of 69%): a second figure said as the
    table's. Both are said now, each for what it is."""
    basis = FamilyBasis(
        family="mlp",
        members=("mlp-0.2m", "mlp-1m"),
        flops_per_param=5.4,
        compute=Compute(tflops=0.005),
        opt_ms=(0.0, 6.48),
        ddp_ms=(2.05, 0.597),
    )
    # at no size up to 10T parameters; DDP, a per-device batch of 8, the model benched
    words = {"batch": 8, "target": 0.7, "params": 1.06e6, "smallest": SMALLEST_SEARCHED}
    words |= {"kept": None, "weak": False, "benched": True, "strategy": "ddp"}

    def family_sentence(found: BreakEven) -> str:  # as ``explanation.break_even_lines`` says it
        disagrees = found.own_disagrees(1.06e6)
        return sentence("break_even_family", basis=basis, found=found, disagrees=disagrees, **words)

    # its own optimizer and DDP times, and the family's lines at its 1.06M parameters
    found = BreakEven(
        flops_per_param=5.4,
        own_optimizer_ms=6.94,
        own_ddp_ms=2.68,
        family_optimizer_ms=6.48 * 1.06,
        family_ddp_ms=2.05 + 0.597 * 1.06,
        pair_throughput_speedup=1.42,
        pair_speedup=0.981,
    )
    said = family_sentence(found)
    figures = re.search(r"gives ([\d.]+)x the throughput on 2 devices \(its table, ([\d.]+)x", said)
    assert figures and (float(figures[1]), float(figures[2])) == (1.42, 0.981), said
    golden.check("advice/table_words", "the family sentence, throughput and speedup", said)
    # no convergence factor: one figure, the table's
    alone = family_sentence(replace(found, pair_speedup=1.42))
    assert re.findall(r"([\d.]+)x", alone.split("this model's own")[1])[:1] == ["1.42"]
    assert "to a trained model" not in alone
