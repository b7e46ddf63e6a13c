"""Bench rows that accumulated gradients or ran FSDP are read as what they measured (H100
walks: tf-7m benched at batch 32 with --accum 4 was advised as one step of 32 samples,
3.6x below its measured rate; tf-30m benched with FSDP was advised on a 1-device step
10 ms below the one measured, the gap called "DDP's own work (measured)")."""

from __future__ import annotations

import re
from pathlib import Path

import gpuscale
from gpuscale.advice.explain.document import advice_view
from tests.builders import one_device_record

ROWS = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"


def test_an_accumulated_run_keeps_its_samples_per_step() -> None:
    row = one_device_record("tf-7m")
    accum, batch = row["config"]["accum"], row["config"]["batch_per_device"]
    assert accum > 1  # the premise
    advice = gpuscale.advise(bench=ROWS, model="tf-7m")
    one = advice.predictions.iloc[0]
    assert int(one["accelerators"]) == 1
    assert int(one["global_batch"]) == batch * accum
    # the one-device rate is the measured one's, within DDP's own copies at N = 1
    measured = row["timing"]["samples_per_s"]
    nosync = batch * accum / (row["timing"]["nosync_step_ms_mean"] / 1e3)
    assert 0.9 * measured <= float(one["samples_per_s"]) <= 1.1 * nosync
    said = " ".join(advice.explanation)
    assert "accumulation" in said
    # no count splits fewer samples than the run took per step
    assert (advice.predictions["global_batch"] == batch * accum).all()


def test_an_fsdp_run_reproduces_its_measured_step_on_one_device() -> None:
    row = one_device_record("tf-30m")
    assert row["config"]["strategy"] == "fsdp"  # the premise
    step = row["timing"]["step_ms_mean"]
    own = step - row["timing"]["nosync_step_ms_mean"]  # FSDP's own work: DDP does none
    for strategy, expected in (("ddp", step - own), ("fsdp", step)):
        advice = gpuscale.advise(bench=ROWS, model="tf-30m", strategy=strategy)
        one = advice.predictions.iloc[0]
        assert abs(float(one["step_ms"]) - expected) <= 0.02 * expected, strategy
        said = " ".join(advice.explanation)
        # DDP predicted from FSDP runs: DDP's own work from its prior, said assumed
        own = re.search(r"DDP's own work: ([\d.]+) ms per step \(assumed", said)
        assert strategy == "fsdp" or (own is not None and float(own.group(1)) > 0)
        assert "(measured: synchronised minus no-sync" not in said
    fsdp = gpuscale.advise(bench=ROWS, model="tf-30m", strategy="fsdp")
    assert "DDP's own copies" not in " ".join(fsdp.explanation)
    assert "FSDP" in " ".join(fsdp.explanation)
    assert "FSDP" in advice_view(fsdp, terminal=True).title
    assert (
        "FSDP" not in advice_view(gpuscale.advise(bench=ROWS, model="tf-7m"), terminal=True).title
    )
