"""A results file's stored flags and the flags recomputed from its numbers are merged by
kind (``plausibility.FlagKind``), not by their words: a flag reworded since the file was
written is one flag, not the old text and the new side by side."""

from __future__ import annotations

import json
from pathlib import Path

from gpuscale.bench.table import bench_table
from gpuscale.plausibility import NOISY_MIN_STEPS, FlagKind, flag_reasons, run_flags

FILE = Path(__file__).parent.parent / "advice" / "cpu_tiny_model_gloo.jsonl"


def _one_device(steps: int | None = NOISY_MIN_STEPS) -> dict:
    """An N = 1 record: its synchronised steps' p95 1.7x their median (noisy), timed over
    ``steps`` (enough for the p95 to be a spread; None: as written, 5)."""
    record = json.loads(FILE.read_text(encoding="utf-8").splitlines()[0])
    if steps is not None:
        record["config"]["steps"] = steps
    return record


def test_a_stored_flag_in_older_words_and_its_recomputed_kind_are_one_flag() -> None:
    record = _one_device()
    # as an older version worded it: the same kind, other words
    record["flags"] = [f"{FlagKind.NOISY_SYNC}: the 95th percentile step is 1.7x the median"]
    row = bench_table([record]).iloc[0]
    assert row["flag_kinds"] == (FlagKind.NOISY_SYNC.value,)
    assert len(flag_reasons(row["flags"])) == 1
    # today's words, recomputed from the record's own numbers
    said = run_flags(
        record["timing"], record["host"], record["noise"], warmup=1, steps=NOISY_MIN_STEPS
    )
    assert flag_reasons(row["flags"]) == said


def test_a_stored_flag_of_a_kind_not_recomputed_stays() -> None:
    record = _one_device()
    record["flags"] = [*record["flags"], f"{FlagKind.SAME_SAMPLES}: as written then"]
    row = bench_table([record]).iloc[0]
    assert row["flag_kinds"] == (FlagKind.NOISY_SYNC.value, FlagKind.SAME_SAMPLES.value)


def test_the_walks_file_as_written_has_one_noisy_flag_that_asks_for_no_steps() -> None:
    """Its N = 1 run's stored flag asked for "more --steps" (written before the reword);
    more steps measure a spread, they do not narrow it (``bench.evidence``), once the run
    timed enough steps for its p95 to be a spread (``NOISY_MIN_STEPS``)."""
    record = _one_device()
    row = bench_table([record]).iloc[0]
    (reason,) = flag_reasons(row["flags"])
    assert row["flag_kinds"] == (FlagKind.NOISY_SYNC.value,)
    assert reason != record["flags"][0] and "--steps" not in reason
