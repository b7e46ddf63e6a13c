"""A run timed with no warm-up step holds its one-off set-up in its first timed step (a
walk: `bench --warmup 0` ran without a word; on CPU the cold synchronised step was 2x the
others and made an N = 1 "synchronisation cost" of 1.6 ms): flagged, by the worker and by
the reader of rows written before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.cli import app
from gpuscale.plausibility import NO_WARMUP, no_warmup

from ..builders import bench_record

pytest.importorskip("torch")


@pytest.mark.slow
def test_a_bench_without_warm_up_is_flagged_and_says_why(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    common = ["bench", "--backend", "gloo", "--nproc", "1", "--models", "mlp-0.2m"]
    for warmup in ("0", "1"):
        args = [*common, "--steps", "2", "--warmup", warmup, "--out", str(out)]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
    cold, warm = (json.loads(line) for line in out.read_text().splitlines())
    assert cold["config"]["warmup"] == 0 and NO_WARMUP in cold["flags"]
    assert warm["config"]["warmup"] == 1 and NO_WARMUP not in warm["flags"]
    shown = CliRunner().invoke(app, ["analyze", "--bench", str(out), "-f", "json"])
    assert shown.exit_code == 0, shown.output
    flags = [row["flags"] or "" for row in json.loads(shown.stdout)["bench"]["runs"]]
    assert sum("no warm-up" in f for f in flags) == 1


def test_a_row_written_before_the_rule_is_flagged_when_read() -> None:
    record = bench_record("mlp-0.2m", 199_946, 1, 900.0)
    record["config"]["warmup"] = 0
    assert record["flags"] == []
    table = bench_table([record])
    assert NO_WARMUP in table["flags"].iloc[0] and table["flagged"].iloc[0]


def test_an_fsdp_run_without_warm_up_is_said_in_fsdps_words() -> None:
    """A walk: `--warmup 0` on an FSDP run was flagged for "DDP's bucket rebuild", which
    FSDP does not do; a row written so reads in FSDP's words."""
    record = bench_record("mlp-0.2m", 199_946, 1, 900.0, config=BenchConfig(strategy="fsdp"))
    record["config"]["warmup"] = 0
    record["flags"] = [NO_WARMUP]  # as the worker wrote it before
    (flag,) = bench_table([record])["flags"]
    assert flag == no_warmup("fsdp") and "DDP" not in flag
    assert "FSDP's lazy initialisation and first all-gather" in flag
    ddp = bench_record("mlp-0.2m", 199_946, 1, 900.0)
    ddp["config"]["warmup"] = 0
    assert "DDP's bucket rebuild" in bench_table([ddp])["flags"].iloc[0]
