"""Where the parity tests' official detailed summary comes from: stored beside the official
scores (``official_detail_vX.Y.csv``), else the user's cache of the official tool's output
(never the test session's temporary cache home, where it could never be found), else a
skip whose reason is true of what ``../shared/mlperf/official/`` holds."""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pandas as pd
import pytest

from tests.mlperf import official


def test_the_cache_is_the_users_whenever_official_is_imported(tmp_path: Path) -> None:
    """The session moves XDG_CACHE_HOME to a temporary folder (tests/conftest.py): a
    cache looked for there is never found, and the 18 detail tests always skipped."""
    module = importlib.reload(official)  # as the parity fixture imports it: mid-session
    archive = tmp_path / "training_results_v4.1.tar.xz"
    archive.write_bytes(b"not a round")
    session = Path(os.environ["XDG_CACHE_HOME"])
    where = module._cache_path(archive)
    assert session not in where.parents, where
    assert where.parent == Path(os.environ[module.USER_CACHE_HOME]) / "gpuscale-tests"


def test_a_stored_detail_reads_back_what_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = {
        ("Dell", "XE9680x8H100", "bert"): {"gbs": 448.0, "samples": 3.9e6, "energy": None},
        ("NVIDIA, Inc", "eos,n8", "llama2_70b_lora"): {"gbs": 8.0, "samples": 3072.0,
                                                       "energy": 1.25e7},
    }  # fmt: skip
    notes = ["smc-ac-power: official summarizer crashed computing power; rerun without power"]
    monkeypatch.setattr(official, "official_scores", lambda archive: (made, notes))
    path = official.write_detail("v4.0", tmp_path / "training_results_v4.0.tar.xz", tmp_path)
    assert path.parent == tmp_path and path.stem.endswith("_v4.0") and path.suffix == ".csv"
    assert official.stored_detail("v4.0", tmp_path) == (made, notes)
    assert official.stored_detail("v4.1", tmp_path) is None


def test_the_skip_reason_says_what_the_stored_scores_hold(golden) -> None:
    """The detail tests skip saying the stored official scores give time to train only:
    true of every official_scores_vX.Y.csv (were they to gain the columns, use them)."""
    from tests.mlperf.test_parity import NO_DETAIL, ROUNDS

    reason = NO_DETAIL.format(round="v4.1")
    assert "v4.1" in reason and "-m tests.mlperf" in reason  # the round, and how to make it
    golden.check("mlperf/parity_skips", "no official detail stored", reason)
    folder = official.SHARED_OFFICIAL
    if not folder.is_dir():
        pytest.skip(f"{folder} not present (../shared is not checked out beside the repo)")
    for round_name in ROUNDS:
        columns = set(pd.read_csv(folder / f"official_scores_{round_name}.csv", nrows=1))
        assert "time_to_train_min" in columns
        assert not columns & {"gbs", "samples", "energy", "global_batch_size", "energy_j"}
