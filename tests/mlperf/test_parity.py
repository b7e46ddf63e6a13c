"""Parity with MLCommons' official result summarizer on the real rounds in ../shared.

For every (system, benchmark) of rounds v4.0, v4.1 and v5.0 the official tool scores,
gpuscale's score must agree within 1e-9 relative, and gpuscale must score exactly the
same set of results. Skipped where ../shared/mlperf or mlperf-logging is absent.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from gpuscale.mlperf.benchmarks import benchmark_folder_alias
from gpuscale.mlperf.ingest import read_round

SHARED = Path(__file__).resolve().parents[3] / "shared" / "mlperf"
ROUNDS = ["v4.0", "v4.1", "v5.0"]

pytestmark = [pytest.mark.shared, pytest.mark.slow]


def archive_for(round_name: str) -> Path:
    path = SHARED / f"training_results_{round_name}.tar.xz"
    if not path.exists():
        pytest.skip(f"{path} not present (../shared is not checked out beside the repo)")
    pytest.importorskip("mlperf_logging")
    return path


def _present(value) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


@pytest.fixture(scope="module", params=ROUNDS)
def round_pair(request):
    from .official import official_scores

    archive = archive_for(request.param)
    official, notes = official_scores(archive)
    ours = read_round(archive)
    return request.param, official, notes, ours


def test_scores_match_official(round_pair) -> None:
    round_name, official, _notes, ours = round_pair
    expected = {k: v["score"] for k, v in official.items() if _present(v["score"])}
    got = {}
    for row in ours.scores.to_dict("records"):
        if _present(row["time_to_train_min"]):
            key = (row["org"], row["system_id"], benchmark_folder_alias(row["benchmark"]))
            got[key] = row["time_to_train_min"]
    assert len(expected) > 100
    assert set(got) == set(expected), (
        f"only official: {sorted(set(expected) - set(got))[:5]}, "
        f"only gpuscale: {sorted(set(got) - set(expected))[:5]}"
    )
    worst = max(abs(got[k] - v) / abs(v) for k, v in expected.items())
    assert worst <= 1e-9, f"{round_name}: largest relative difference {worst:.3g}"


def test_power_crash_is_documented(round_pair) -> None:
    round_name, _, notes, _ = round_pair
    # v4.0's smc-ac-power and smc-dc-power submissions crash the official tool's energy
    # computation; the parity above used its time scores without power.
    if round_name == "v4.0":
        assert any("smc" in n for n in notes)
    else:
        assert notes == []
