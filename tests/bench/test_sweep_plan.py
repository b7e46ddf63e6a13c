"""A bench sweep planned before it runs (``gpuscale.bench.sweep_plan``): size bounds
checked, models chosen, the configuration and what the command says of it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuscale.bench import sweep_plan
from gpuscale.bench.config import BenchConfig, ModelError
from gpuscale.bench.runner import SweepReport
from gpuscale.tables.requests import FieldError

VIEW = "bench/sweep_plan"


def numbers(said: str) -> list[int]:
    """The whole numbers a sentence says, in order (a file's name holds none here)."""
    return [int(n) for n in re.findall(r"\b\d+\b", said)]


def test_a_bound_that_is_no_size_names_its_field() -> None:
    sweep_plan.check_bounds("2M", None)
    with pytest.raises(FieldError) as caught:
        sweep_plan.check_bounds("2M", "lots")
    assert caught.value.field == "min_params" and caught.value.value == "lots"


def test_choose_models_passes_names_and_bounds_to_the_ladder(monkeypatch) -> None:
    pytest.importorskip("torch")
    from gpuscale.bench import models

    seen = {}

    def fake(names, max_params, min_params, count):
        seen.update(names=names, bounds=(max_params, min_params), count=count)
        return [("mlp-0.2m", 199_946)], []

    monkeypatch.setattr(models, "sort_models", fake)
    chosen, broken = sweep_plan.choose_models([], "2M", None, BenchConfig())
    assert chosen == [("mlp-0.2m", 199_946)] and broken == []
    assert seen["names"] is None and seen["bounds"] == ("2M", None) and callable(seen["count"])


def test_plan_sweep_refuses_an_empty_selection_but_keeps_broken_models(tmp_path, golden) -> None:
    settings = {"nproc": (1,), "out": tmp_path / "r.jsonl", "bench": BenchConfig(backend="gloo")}
    with pytest.raises(ValueError) as caught:
        sweep_plan.plan_sweep([], [], **settings)
    golden.check(VIEW, "no model selected", str(caught.value))
    broken = [("nosuch.py:make", ModelError("no such file"))]
    config = sweep_plan.plan_sweep([], broken, **settings)
    assert config.models == ()
    config = sweep_plan.plan_sweep([("a", 1), ("b", 2)], broken, **settings | {"nproc": (1, 2)})
    assert config.models == ("a", "b")
    said = sweep_plan.plan_sentence(config, broken)
    assert numbers(said) == [4, 2, 2, 1]  # configurations, models, world sizes, broken
    golden.check(VIEW, "two models on two world sizes, one broken", said)


def test_done_sentence_counts_what_the_sweep_did(golden) -> None:
    report = SweepReport(appended=3, measured=2, skipped=1)
    said = sweep_plan.done_sentence(report, Path("r.jsonl"), nnodes=1)
    assert numbers(said) == [2, 3, 1, 0] and "r.jsonl" in said  # measured, rows, skipped, failed
    golden.check(VIEW, "done: measured, appended, skipped", said)
    said = sweep_plan.done_sentence(SweepReport(appended=1, measured=1), Path("r.jsonl"), 1)
    assert numbers(said) == [1, 1, 0] and "resume" not in said  # no --resume, no word of it
    golden.check(VIEW, "done: one row, no --resume", said)
    said = sweep_plan.done_sentence(SweepReport(), Path("r.jsonl"), nnodes=2)
    assert "--node-rank" in said and "r.jsonl" not in said  # which node writes, not a file
    golden.check(VIEW, "done: a node that wrote no rows", said)


@pytest.mark.parametrize(
    ("report", "chosen", "status", "closing", "refused"),
    [
        (SweepReport(appended=2, measured=2), [("a", 1)], 0, 1, False),
        (SweepReport(appended=1, measured=0, failures=["a on 2"]), [("a", 1)], 1, 1, False),
        (SweepReport(appended=1, measured=1, interrupted=True), [("a", 1)], 130, 2, False),
        (SweepReport(appended=1), [], 0, 1, True),
    ],
)
def test_a_planned_sweep_ends_with_its_status_and_what_it_kept(
    tmp_path, monkeypatch, golden, report, chosen, status, closing, refused
) -> None:
    """The exit status (130 interrupted, 1 a run failed), the closing lines (what an
    interrupted sweep kept after what it did) and the refusal where no model was built."""
    monkeypatch.setattr(sweep_plan, "run_sweep", lambda *a, **k: report)
    broken = [("nosuch.py:make", ModelError("no such file"))]
    config = sweep_plan.plan_sweep(
        chosen, broken, nproc=(1,), out=tmp_path / "r.jsonl", bench=BenchConfig(backend="gloo")
    )
    planned = sweep_plan.Planned(chosen, broken, config, sweep_plan.Nodes(1, 0, None))
    ran = sweep_plan.run_planned(planned)
    assert (ran.status, len(ran.closing), bool(ran.refusal)) == (status, closing, refused)
    assert ran.report is report
    words = "\n".join([*ran.closing, ran.refusal])
    case = f"status {status}, {len(chosen)} chosen"
    golden.check(VIEW, f"ending: {case}", words, paths={str(tmp_path): "<tmp>"})


def test_nothing_planned_is_not_run() -> None:
    planned = sweep_plan.Planned([], [], None, sweep_plan.Nodes(1, 0, None))
    with pytest.raises(ValueError):
        sweep_plan.run_planned(planned)


def test_a_node_says_what_each_world_size_waits_for(tmp_path) -> None:
    """Several nodes: the plan says the node, the nodes awaited, the rendezvous and how long
    a missing node holds a world size (--timeout x --repeat, and torchrun's minute); one
    node says none of it."""
    bench = BenchConfig(backend="gloo", timeout_s=100.0, repeat=2)
    settings = {"nproc": (1,), "out": tmp_path / "r.jsonl", "bench": bench}
    one = sweep_plan.plan_sweep([("a", 1)], [], **settings)
    assert sweep_plan.waits(one) == ""
    two = sweep_plan.plan_sweep(
        [("a", 1)], [], **settings, nnodes=2, node_rank=1, rdzv_endpoint="head:29500"
    )
    said = sweep_plan.waits(two)
    # node 2 of 2 (node rank 1), all 2 nodes, at head:29500, 260 s
    assert numbers(said) == [2, 2, 1, 2, 29500, 260] and "head:29500" in said
    assert said in sweep_plan.plan_sentence(two, [])
