"""The verdicts as ``gpuscale collectives -f csv`` and ``-f json`` write them
(``interconnect.shown.verdict_view``): every field of each verdict, its change since an
earlier sweep included, and what the terminal says under the verdict."""

from __future__ import annotations

import csv
import io
import json
import math

import pandas as pd
from rich.console import Console

from gpuscale.cli.output import Format, print_frame
from gpuscale.interconnect.changes import ChangeKind, SweepChange
from gpuscale.interconnect.shown import verdict_view
from gpuscale.interconnect.verdict import LOW, OpVerdict
from gpuscale.tables.views import jsonable

DROP = SweepChange(
    ChangeKind.DROPPED, "s0", before_gbs=100.0, now_gbs=50.0, noise_share=0.15, iters=20,
    suspects="NCCL version, NCCL_* settings",
)  # fmt: skip
REDUCE = OpVerdict(
    "all_reduce", 50.0, 1 << 30, 100.0, 0.5, LOW, "nvlink3 (8 GPUs)",
    causes=["NCCL_P2P_DISABLE=1 sends GPU traffic through host memory"], change=DROP,
    gpus=(0, 1), ring_link="NV", ring_preset="nvlink3", host=("a busy host",),
)  # fmt: skip
GATHER = OpVerdict("all_gather", 30.0, 1 << 20, None, None, "no reference", "no topology")
LATEST = pd.DataFrame(
    {
        "op": ["all_reduce", "all_gather", "broadcast"],
        "status": ["ok", "ok", "oom"],
        "error": [None, None, math.nan],
    }
)


def test_json_is_every_verdict_record_and_what_is_said_under_it() -> None:
    view = verdict_view([REDUCE, GATHER], "s1", ["NCCL_P2P_DISABLE=1"], LATEST)
    doc = json.loads(json.dumps(jsonable(view.document)))
    assert doc["sweep_id"] == "s1" and doc["nccl_settings"] == ["NCCL_P2P_DISABLE=1"]
    assert doc["not_run"] == ["broadcast: oom (out of memory on a rank)"]
    reduce, gather = doc["verdicts"]
    assert (reduce["reference"], reduce["gpus"]) == ("nvlink3 (8 GPUs)", [0, 1])
    assert reduce["verdict"] == LOW and reduce["ratio"] == 0.5
    assert reduce["change"]["kind"] == "dropped" and reduce["change"]["against"] == "s0"
    assert (reduce["change"]["before_gbs"], reduce["change"]["now_gbs"]) == (100.0, 50.0)
    assert reduce["change"]["sentence"].startswith("DROPPED 50% since sweep s0")
    assert reduce["host"] == ["a busy host"] and reduce["sentence"] == REDUCE.sentence()
    assert gather["change"] is None and gather["expected_busbw_gbs"] is None


def test_csv_is_a_row_per_verdict_its_change_in_columns() -> None:
    view = verdict_view([REDUCE, GATHER], "s1", ["NCCL_P2P_DISABLE=1"], LATEST)
    written = io.StringIO()
    print_frame(Console(file=written), view.frame, Format.csv)  # as `-f csv` writes it
    rows = list(csv.DictReader(io.StringIO(written.getvalue())))
    reduce, gather = rows
    assert (reduce["op"], reduce["ratio"], reduce["gpus"]) == ("all_reduce", "0.5", "0; 1")
    assert (reduce["change_kind"], reduce["change_before_gbs"]) == ("dropped", "100.0")
    assert reduce["change_iters"] == "20" and reduce["ring_preset"] == "nvlink3"
    assert (gather["change_kind"], gather["expected_busbw_gbs"], gather["gpus"]) == ("", "", "")
    assert view.said == (
        "NCCL setting: NCCL_P2P_DISABLE=1",
        "broadcast: oom (out of memory on a rank)",
    )
