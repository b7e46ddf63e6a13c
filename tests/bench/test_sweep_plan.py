"""A bench sweep planned before it runs (``gpuscale.bench.sweep_plan``): size bounds
checked, models chosen, the configuration and what the command says of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscale.bench import sweep_plan
from gpuscale.bench.config import BenchConfig, ModelError
from gpuscale.bench.runner import SweepReport
from gpuscale.tables.requests import FieldError


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


def test_plan_sweep_refuses_an_empty_selection_but_keeps_broken_models(tmp_path) -> None:
    settings = {"nproc": (1,), "out": tmp_path / "r.jsonl", "bench": BenchConfig(backend="gloo")}
    with pytest.raises(ValueError, match="no model selected"):
        sweep_plan.plan_sweep([], [], **settings)
    broken = [("nosuch.py:make", ModelError("no such file"))]
    config = sweep_plan.plan_sweep([], broken, **settings)
    assert config.models == ()
    config = sweep_plan.plan_sweep([("a", 1), ("b", 2)], broken, **settings | {"nproc": (1, 2)})
    assert config.models == ("a", "b")
    said = sweep_plan.plan_sentence(config, broken)
    assert said == "4 configurations: 2 models x 2 world sizes; 1 model cannot be built"


def test_done_sentence_counts_what_the_sweep_did() -> None:
    report = SweepReport(appended=3, measured=2, skipped=1)
    said = sweep_plan.done_sentence(report, Path("r.jsonl"), nnodes=1)
    assert said == "2 measured, 3 rows appended to r.jsonl, 1 skipped (--resume), 0 failed"
    said = sweep_plan.done_sentence(SweepReport(appended=1, measured=1), Path("r.jsonl"), 1)
    assert said == "1 measured, 1 row appended to r.jsonl, 0 failed"  # no --resume, no word
    said = sweep_plan.done_sentence(SweepReport(), Path("r.jsonl"), nnodes=2)
    assert said.startswith("this node wrote no rows: the node holding global rank 0")
