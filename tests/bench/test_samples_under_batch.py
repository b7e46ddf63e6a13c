"""A step's global batch that repeats its samples (``make_batch`` drawing from fewer
samples than the global batch, which weak scaling grows with N) is counted where the run
is measured, flagged where its row is made (``plausibility.samples_flags``) and so left
out of what reads trusted runs."""

from __future__ import annotations

import pytest
import torch

from gpuscale.analysis.bench_scaling import bench_scaling, trusted
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.model_base import sample_digests
from gpuscale.bench.summary import measured_fields
from gpuscale.bench.table import bench_table
from gpuscale.plausibility import FlagKind, distinct_at_batch, samples_flags

from ..builders import one_and_two


def test_equal_samples_have_equal_digests_whatever_their_place() -> None:
    data = torch.arange(40, dtype=torch.float32).reshape(10, 4)  # a dataset of 10 samples
    labels = torch.arange(10)
    first = sample_digests((data[[0, 1, 2, 3]], labels[[0, 1, 2, 3]]))
    second = sample_digests((data[[2, 3, 4, 5]], labels[[2, 3, 4, 5]]))
    assert first is not None and second is not None and len(first) == 4
    assert first[2:] == second[:2]  # samples 2 and 3 on both "ranks"
    assert len(set(first + second)) == 6
    # the same inputs with another target are another sample; bf16 is read byte for byte
    relabelled = sample_digests((data[[0]], labels[[9]]))
    assert relabelled != first[:1]
    assert len(set(sample_digests((data.bfloat16(), labels)))) == 10
    # a tuple of inputs counts each; no shared first dimension: no digests
    assert len(sample_digests(((data, data * 2), labels))) == 10
    assert sample_digests((data, labels[:3])) is None
    assert sample_digests(("text", labels)) is not None  # the tensors there are
    assert sample_digests(("text", "labels")) is None


def _rank(digests: list[str] | None) -> dict:
    phases = {"forward": [1.0], "backward": [2.0], "optimizer": [0.5]}
    return {
        "kinds": {"synced": {"step": [4.0], **phases}, "nosync": {"step": [3.5], **phases}},
        "comm_ms": [0.5],
        "peak": 1,
        "meter": None,
        "host": (None, None, "h"),
        "local_sq": [1.0],
        "digests": digests,
    }


def test_the_record_counts_the_distinct_samples_of_the_global_batch() -> None:
    # two ranks of 4 drawing from a dataset of 6: samples c and d on both
    gathered = [_rank(["a", "b", "c", "d"]), _rank(["c", "d", "e", "f"])]
    fields = measured_fields(BenchConfig(steps=1), "cpu", 2, 4, None, 8, [8], gathered, [2.0])
    assert fields["data"] == {"samples_drawn": 8, "samples_distinct": 6}
    unknown = [_rank(["a"]), _rank(None)]  # a rank whose batch gave no digests
    assert (
        measured_fields(BenchConfig(steps=1), "cpu", 2, 1, None, 8, [8], unknown, [2.0])["data"]
        is None
    )


def test_a_global_batch_over_its_samples_is_flagged_with_its_counts() -> None:
    # 64 drawn from a dataset of 64 give 64 (1 - (63/64)^64) = 40.6 distinct on average
    assert distinct_at_batch(64) == pytest.approx(40.64, abs=0.01)
    assert distinct_at_batch(8) == pytest.approx(5.25, abs=0.01)
    (flag,) = samples_flags({"samples_drawn": 64, "samples_distinct": 32})  # a dataset of 32
    assert flag.startswith(f"{FlagKind.SAMPLES_UNDER_BATCH}: 32 distinct samples")
    assert "global batch of 64" in flag and "under the 40.6 that" in flag
    # a sample drawn twice from a dataset larger than the batch: no flag
    assert samples_flags({"samples_drawn": 64, "samples_distinct": 60}) == []
    assert samples_flags({"samples_drawn": 64, "samples_distinct": 64}) == []
    assert samples_flags(None) == samples_flags({"samples_drawn": 64}) == []
    assert samples_flags({"samples_drawn": 64.0, "samples_distinct": 30}) == []  # no count


def test_the_row_is_flagged_and_left_out_of_the_trusted_runs() -> None:
    records = one_and_two(
        "mlp-4m",
        4_000_000,
        one={"data": {"samples_drawn": 8, "samples_distinct": 8}},
        two={"data": {"samples_drawn": 16, "samples_distinct": 8}},  # a dataset of 8
    )
    table = bench_table(records)
    one, two = table.sort_values("accelerators").itertuples(index=False)
    assert not one.flagged and two.flagged
    # one kind: the flag's remedy is part of its reason, no reason of its own
    assert tuple(two.flag_kinds) == (FlagKind.SAMPLES_UNDER_BATCH.value,)
    assert "8 distinct samples in a global batch of 16" in two.flags
    scaling = bench_scaling(table)
    assert list(trusted(scaling)["accelerators"]) == [1]  # the N = 2 run read by no fit
    plain = bench_table(one_and_two("mlp-4m", 4_000_000))  # rows without the counts
    assert not plain["flagged"].any()
