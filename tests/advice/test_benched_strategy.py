"""Advice on runs of another strategy than the one predicted says so (a walk: tf-30m,
benched with ``--strategy fsdp`` on the H100, was advised as DDP without a word, its
FSDP synchronised-minus-no-sync gap charged as 10.1 ms of "DDP's own copies")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.calibrate.errors import CalibrationError
from gpuscale.advice.explain.as_json import advice_document
from gpuscale.advice.types import FindingKind, TermId
from gpuscale.tables.requests import NamedError

ROWS = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"
H100_RESNET = Path(__file__).parent / "h100_resnet50_bf16.jsonl"


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
    with pytest.raises(CalibrationError) as refused:
        gpuscale.advise(bench=ROWS, model="tf-30m", bucket_mb=50.0)
    found = refused.value.found
    assert found.kind is FindingKind.BUCKET_UNUSED_BY_BENCHED
    assert dict(found.values) == {"model": "tf-30m", "strategy": "fsdp"}
    as_ddp = gpuscale.advise(bench=ROWS, model="tf-30m", strategy="ddp", bucket_mb=50.0)
    default = gpuscale.advise(bench=ROWS, model="tf-30m", strategy="ddp")
    assert as_ddp.calibration.run.bucket_mb == 50.0
    assert default.calibration.run.bucket_mb == 25.0
    # two buckets' worth of a DDP step differ: the size given acts
    assert list(as_ddp.predictions["step_ms"]) != list(default.predictions["step_ms"])


def test_the_bucket_size_benched_is_the_one_advised_where_none_is_given(tmp_path: Path) -> None:
    """ResNet-50 benched with --bucket-mb 10 (its 102 MB of gradients in 11 buckets, not 5):
    the advice predicts DDP with the bucket size benched, as it does the strategy, unless
    one is given; a size given acts."""
    rows = []
    for line in H100_RESNET.read_text().splitlines():
        row = json.loads(line)
        row["config"]["bucket_mb"] = 10.0
        rows.append(json.dumps(row))
    path = tmp_path / "resnet_bucket10.jsonl"
    path.write_text("\n".join(rows) + "\n")
    benched = gpuscale.advise(bench=path)
    given = {mb: gpuscale.advise(bench=path, bucket_mb=mb) for mb in (10.0, 25.0)}
    assert benched.calibration.run.bucket_mb == 10.0
    assert given[25.0].calibration.run.bucket_mb == 25.0
    steps = {mb: list(a.predictions["step_ms"]) for mb, a in given.items()}
    assert list(benched.predictions["step_ms"]) == steps[10.0] != steps[25.0]
    # -f json carries the bucket the steps were priced with, and none where sharded
    assert advice_document(benched)["recommendation"]["bucket_mb"] == 10.0
    assert advice_document(given[25.0])["recommendation"]["bucket_mb"] == 25.0
    fsdp = gpuscale.advise(bench=path, strategy="fsdp")
    assert advice_document(fsdp)["recommendation"]["bucket_mb"] is None
    # the overlap's finding (its words: all but the last of its buckets) carries the size
    for advice, mb in ((benched, 10.0), (given[25.0], 25.0)):
        (overlap,) = [a for a in advice.assumptions if a.term == TermId.OVERLAP]
        assert overlap.value["bucket_mb"] == mb
    # with a sharded strategy asked, a bucket size given is refused, its default value too
    with pytest.raises(ValueError) as sharded:
        gpuscale.advise(bench=path, strategy="fsdp", bucket_mb=25.0)
    assert isinstance(sharded.value, NamedError)  # refused as a pair, before any calibration
