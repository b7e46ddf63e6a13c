"""An interval wholly below 1x decides against the count, however wide: a CPU bench of two
2-step runs (``cpu_mlp_slower_gloo.jsonl``: ``gpuscale bench --backend gloo --nproc 1,2
--models mlp-0.2m --steps 2 --warmup 1``) predicts 2 processes at 0.0937x (0.0334-0.257x,
a factor of 7.7 wide); the answer called it "too wide", as it does an interval that reaches
past 1x, where it says that 2 devices are slower than 1 throughout."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gpuscale.advice.records import Row
from gpuscale.cli import app
from gpuscale.tables.advice import TOO_WIDE_TO_TEST

from ..golden import Golden

BENCH = Path(__file__).parent / "cpu_mlp_slower_gloo.jsonl"


def _row(speedup: float, low: float, high: float) -> Row:
    return Row(
        accelerators=2,
        speedup=speedup,
        speedup_low=low,
        speedup_high=high,
        throughput_efficiency=speedup / 2,
        convergence_factor=1.0,
    )


def test_the_row_says_whether_its_interval_loses_or_is_too_wide() -> None:
    """The bench's 2 devices (wholly below 1x, wide), another CPU bench's (0.0306-1.11x:
    wide, reaching past 1x) and a third's (0.0982-0.301x: within a factor of 4)."""
    below = _row(0.0937, 0.0334, 0.257)
    assert below.loses and below.wide_factor is not None
    assert below.interval_reads == "loses"
    across = _row(0.201, 0.0306, 1.11)
    assert not across.loses and across.interval_reads == "wide"
    narrow = _row(0.172, 0.0982, 0.301)
    assert narrow.loses and narrow.wide_factor is None and narrow.interval_reads == "plain"
    one_run = _row(0.3, float("nan"), float("nan"))  # a row on a single run: no interval
    assert not one_run.loses and one_run.interval_reads == "plain"


def test_the_answer_says_more_devices_lose_where_the_whole_interval_is_below_1x(
    golden: Golden,
) -> None:
    runs = [
        CliRunner().invoke(app, ["advise", "--bench", str(BENCH), *f]) for f in ([], ["-f", "json"])
    ]
    assert all(run.exit_code == 0 for run in runs), [run.output for run in runs]
    document = json.loads(runs[1].output)
    focus = document["decision"]["focus"]
    low, high = focus["speedup_low"], focus["speedup_high"]
    assert focus["accelerators"] == 2 and high < 1 and high / low > TOO_WIDE_TO_TEST  # the case
    assert document["recommendation"]["accelerators"] == 1
    (line,) = [a for a in document["answer"] if a.startswith("Use 1 device")]
    golden.check("advice/slower_interval", "2 devices slower throughout", line)
    assert "too wide" not in runs[0].output
    assert line in " ".join(runs[0].output.split())
