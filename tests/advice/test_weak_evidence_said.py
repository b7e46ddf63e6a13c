"""Figures read from bench runs of few timed steps are said with what they rest on, never
as findings (a user walk: after the README's 2-step quickstart the advice said
"Communication inside DDP measured at 70.5x the network's prediction; applied to every
prediction" and "2 devices beat 1 at no size up to 10T parameters" as facts)."""

from __future__ import annotations

import re
from pathlib import Path

import gpuscale
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.evidence import MIN_STEPS
from gpuscale.bench.results_file import append_result
from gpuscale.plausibility import host_measured, timed_window_s

from ..builders import one_and_two
from ..golden import Golden

VIEW = "advice/weak_evidence"


def _results(tmp_path: Path, steps: int) -> tuple[Path, list[dict]]:
    path = tmp_path / f"results-{steps}.jsonl"
    records = one_and_two("mlp-4m", 4_000_000, config=BenchConfig(steps=steps, batch=8))
    for record in records:
        append_result(path, record)
    return path, records


def _lines(advice, start: str) -> list[str]:
    return [line for line in advice.explanation if line.startswith(start)]


def _steps_asked(line: str) -> int:
    return int(re.search(r"--steps (\d+) or more", line).group(1))


def test_figures_from_few_steps_say_what_they_rest_on(tmp_path: Path, golden: Golden) -> None:
    steps = MIN_STEPS // 5  # the README's quickstart times 2 steps
    path, records = _results(tmp_path, steps)
    advice = gpuscale.advise(bench=path, link="pcie-phb", max_devices=2)
    rests = f"from {steps} timed steps per run"
    comm = _lines(advice, "Communication inside DDP")
    assert len(comm) == 1 and rests in comm[0] and "not a reliable one" in comm[0]
    runs_with_comm = sum(1 for r in records if r["timing"]["comm_ms"] is not None)
    assert f"({runs_with_comm} run;" in comm[0] or f"({runs_with_comm} runs;" in comm[0]
    family = _lines(advice, "For this model's family")
    assert family and "not a finding" in family[0] and f"({steps} timed steps" in family[0]
    tmp = {str(tmp_path): "<tmp>"}
    golden.check(VIEW, "communication from few steps", comm[0], paths=tmp)
    golden.check(VIEW, "the family's break-even from few steps", family[0], paths=tmp)
    break_even = _lines(advice, "Break-even")
    assert not break_even or rests in break_even[0]
    # what to bench instead: enough steps for firm evidence, and for every run a timed
    # phase long enough to measure the host's busy share (the rule the bench grades by);
    # one number for the model's runs, whichever of them a figure was read from
    asked = {_steps_asked(line) for line in (comm[0], family[0])}
    assert len(asked) == 1
    assert asked.pop() >= 3 * MIN_STEPS
    assert all(host_measured(timed_window_s(r["timing"], _steps_asked(comm[0]))) for r in records)


def test_figures_from_enough_steps_stand_as_measured(tmp_path: Path, golden: Golden) -> None:
    path, _ = _results(tmp_path, 2 * MIN_STEPS)
    advice = gpuscale.advise(bench=path, link="pcie-phb", max_devices=2)
    comm = _lines(advice, "Communication inside DDP")
    assert len(comm) == 1 and "steps per run" not in comm[0]
    golden.check(VIEW, "communication from enough steps", comm[0])
    family = _lines(advice, "For this model's family")
    assert family and "prediction to test" not in family[0] and "predict" not in family[0]
    assert not any("weak runs" in line for line in advice.explanation)
