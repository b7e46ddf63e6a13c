"""A results row whose fields contradict each other, each value possible alone, is skipped
naming both; every results file kept in the repository (and the H100 sweeps beside it)
still reads whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuscale.bench.results import read_results

from .test_results_refusals import read_edited

TESTS = Path(__file__).parents[1]
CPU_ROWS = TESTS / "cpu_mlp_gloo.jsonl"  # mlp-0.2m on 1 and 2 CPU processes, 8 a process
SHARED = TESTS.parents[1] / "shared" / "gpu" / "h100"


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        (
            "config.global_batch",
            17,
            "config.global_batch 17 is not config.batch_per_device 8 x config.accelerators 2 "
            "x config.accum 1 (16)",
        ),
        (
            "timing.nosync_step_ms_mean",
            100.0,
            "timing.nosync_step_ms_mean 100 is not the mean of per_rank.nosync_step_ms's "
            "slowest rank per step (3.057 ms)",
        ),
        (
            "timing.step_ms_mean",
            5.67,
            "timing.step_ms_mean 5.67 is not the mean of per_rank.step_ms's slowest rank "
            "per step (12.41 ms)",
        ),
        (
            "timing.backward_ms",
            2.5e9,
            "timing.backward_ms 2,500,000,000 is longer than the step it is part of "
            "(timing.nosync_step_ms_mean 3.057)",
        ),
        (
            "timing.samples_per_s",
            1e12,
            "timing.samples_per_s 1,000,000,000,000 is not config.global_batch 16 over "
            "timing.step_ms_mean 12.41 (1,290)",
        ),
    ],
)
def test_a_row_whose_fields_contradict_is_skipped_naming_them(
    tmp_path: Path, field: str, value: object, said: str
) -> None:
    """Hand-edited rows were read: a global batch of 17 for 8 a process on 2, a no-sync
    step of 100 ms where its ranks' steps say 3.06, a backward phase of 2.5e9 ms in a
    3.06 ms step, 1e12 samples/s from 16 samples in 12.4 ms. Every number of a message is
    written to 4 significant figures (no 3.0566868500500277 beside a rate of 1290)."""
    path, records, problems = read_edited(tmp_path, CPU_ROWS, 1, field, value)
    assert [r["config"]["accelerators"] for r in records] == [1]
    assert problems == [f"{path}:2: {said}; skipped"]


def test_a_rate_written_to_three_digits_is_still_read(tmp_path: Path) -> None:
    """Rounding is no contradiction: the rate, steps and phases at 3 significant digits."""
    rows = [json.loads(line) for line in CPU_ROWS.read_text().splitlines()]
    for row in rows:
        timing = row["timing"]
        for name in ("samples_per_s", "step_ms_mean", "nosync_step_ms_mean", "backward_ms"):
            timing[name] = float(f"{timing[name]:.3g}")
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    records, problems = read_results(path)
    assert (len(records), problems) == (2, [])


FILES = [
    path
    for path in [*sorted(TESTS.rglob("*.jsonl")), *sorted(SHARED.glob("*.jsonl"))]
    if json.loads(path.read_text().splitlines()[0]).get("schema", "").startswith("gpuscale.bench")
]


@pytest.mark.parametrize("path", FILES, ids=str)
def test_every_kept_results_file_reads_whole(path: Path) -> None:
    """The bench wrote each row of these from one measurement: none contradicts itself."""
    records, problems = read_results(path)
    assert (len(records), problems) == (len(path.read_text().splitlines()), [])
