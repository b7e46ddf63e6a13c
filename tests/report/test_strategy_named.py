"""The report names the advice's strategy and link as the advice's own table does: the
figure's title is the table's title (a custom link by its numbers, ZeRO-2 as the phrasebook
spells it, never an upper-cased id), and the scope says a predicted strategy by its name."""

from __future__ import annotations

from types import SimpleNamespace

import gpuscale
from gpuscale.advice.explain.document import table_title
from gpuscale.report.bench_answer import advised_scope


def test_the_table_title_names_a_custom_link_and_zero2() -> None:
    advice = gpuscale.advise(
        params=7e9, step_ms=900.0, batch=8, device_name="H100", strategy="zero2", busbw_gbs=50
    )
    title = table_title(advice.calibration)
    assert "ZeRO-2" in title and "ZERO2" not in title
    assert "custom link of 50 GB/s" in title and " on custom" not in title


def test_the_scope_names_a_predicted_strategy_by_its_name(monkeypatch) -> None:
    import gpuscale.report.bench_answer as bench_answer

    run = {"configuration": "tf-7m (run 2)", "platform": "H100, nccl"}
    monkeypatch.setattr(bench_answer, "_advised_run", lambda *args: run)
    cal = SimpleNamespace(
        model=SimpleNamespace(name="tf-7m"),
        runs=SimpleNamespace(one_step_ms=10.0, one_strategy="ddp"),
        run=SimpleNamespace(strategy="zero2"),
    )
    said = advised_scope(None, None, cal)
    assert said == "tf-7m on H100, nccl, predicted with ZeRO-2"
