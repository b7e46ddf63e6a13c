"""Advice on runs of another strategy than the one predicted says so (a walk: tf-30m,
benched with ``--strategy fsdp`` on the H100, was advised as DDP without a word, its
FSDP synchronised-minus-no-sync gap charged as 10.1 ms of "DDP's own copies")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gpuscale

ROWS = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"


def _strategy_of(model: str) -> str:
    for line in ROWS.read_text().splitlines():
        row = json.loads(line)
        if row.get("config", {}).get("model") == model and row.get("status") == "ok":
            return str(row["config"].get("strategy", "ddp"))
    raise AssertionError(f"no ok row of {model}")


def test_the_strategy_benched_is_said_where_another_is_predicted() -> None:
    benched = _strategy_of("tf-30m")
    assert benched == "fsdp"  # the premise: the H100 rows ran tf-30m under FSDP
    said = " ".join(gpuscale.advise(bench=ROWS, model="tf-30m", strategy="ddp").explanation)
    assert "tf-30m was benched with --strategy fsdp" in said
    assert "give strategy='fsdp'" in said
    same = " ".join(gpuscale.advise(bench=ROWS, model="tf-30m", strategy="fsdp").explanation)
    assert "was benched with --strategy" not in same


def test_a_bucket_size_is_refused_where_the_strategy_benched_is_sharded() -> None:
    """tf-30m benched with FSDP is advised as FSDP where no strategy is given: DDP's bucket
    size given then is refused as with strategy='fsdp' asked (a sharded strategy has no
    buckets); with strategy='ddp' it is used."""
    with pytest.raises(ValueError) as refused:
        gpuscale.advise(bench=ROWS, model="tf-30m", bucket_mb=50.0)
    message = str(refused.value)
    assert message.startswith("bucket_mb= with bench results of tf-30m measured with ")
    assert "strategy='fsdp'" in message and "give strategy='ddp'" in message
    as_ddp = gpuscale.advise(bench=ROWS, model="tf-30m", strategy="ddp", bucket_mb=50.0)
    default = gpuscale.advise(bench=ROWS, model="tf-30m", strategy="ddp")
    assert as_ddp.calibration.run.bucket_mb == 50.0
    assert default.calibration.run.bucket_mb == 25.0
    # two buckets' worth of a DDP step differ: the size given acts
    assert list(as_ddp.predictions["step_ms"]) != list(default.predictions["step_ms"])
