"""The advice's words on the real H100 rows (tests/report/h100_paths.jsonl) against the
table they describe: steps compared hold the same samples, the scaling sentence follows
the counts' accumulation, the JSON's cap is the table's largest overhead, and FSDP's
optimizer step is sharded."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gpuscale

ROWS = Path(__file__).parents[1] / "report" / "h100_paths.jsonl"


def _bench_n1(model: str) -> dict:
    for line in ROWS.read_text().splitlines():
        row = json.loads(line)
        if row["config"]["model"] == model and row["config"]["accelerators"] == 1:
            return row
    raise AssertionError(f"no N = 1 row of {model}")


def test_the_one_device_sentence_sets_steps_of_the_same_samples_side_by_side() -> None:
    """mlp-4m's N = 1 row trains 8 x 8 accumulation steps, the bench's N = 1 run 8 x 1:
    the sentence set 17.4 ms (64 samples) against 5.38 ms (8 samples) unexplained. It
    must say each step's samples, and the step it sets against the bench's no-sync step
    must be the model's at the bench's samples: within 10% of that measured step."""
    advice = gpuscale.advise(bench=ROWS, model="mlp-4m")
    one = advice.predictions.iloc[0]
    bench = _bench_n1("mlp-4m")
    row_samples = int(one["batch_per_device"]) * int(one["accum"])
    bench_samples = int(bench["config"]["batch_per_device"]) * int(bench["config"]["accum"])
    assert row_samples != bench_samples  # the case the user met
    said = next(s for s in advice.explanation if s.startswith("The step predicted on 1"))
    found = re.search(r"holds (\d+) samples .*?, the bench's (\d+)", said)
    assert found, said
    assert (int(found[1]), int(found[2])) == (row_samples, bench_samples)
    at_bench = re.search(r"the same model predicts ([\d.]+) ms", said)
    assert at_bench, said
    nosync = bench["timing"]["nosync_step_ms_mean"]
    assert abs(float(at_bench[1]) / nosync - 1) < 0.10
    assert f"no-sync step {nosync:.3g} ms" in said
