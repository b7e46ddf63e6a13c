"""The --steps asked of weak runs is one number a model with its basis said: a timed
phase long enough at the time per step a configuration's runs measured, all their steps
read together, so that one run more of it moves the number by what its steps add, not
by its own extreme (a user's file asked for --steps 230, then 590 as runs of the same
configuration were appended: the rule took the fastest step any one run had timed); and
the report's bench section asks what the bench's notes ask, flagged runs in the file too.
"""

from __future__ import annotations

import re
from pathlib import Path

from gpuscale.bench.config import BenchConfig
from gpuscale.bench.evidence import MIN_BUSY_WINDOW_S
from gpuscale.bench.results import bench_table
from gpuscale.report.bench_section import build_bench_section
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record


def _run(timed: int, step_ms: float, n: int = 1, batch: int = 8, **extra) -> dict:
    """mlp on ``n`` devices, ``timed`` steps of ``step_ms`` (no-sync and synchronised)."""
    third = step_ms / 3
    return bench_record(
        "mlp", 10**5, n, 1e3 * batch / step_ms, config=BenchConfig(steps=timed, batch=batch),
        batch=batch, forward_ms=third, backward_ms=third, optimizer_ms=third, **extra,
    )  # fmt: skip


def _notes(records: list[dict]) -> str:
    return " ".join(bench_table(records)["evidence_notes"].fillna(""))


def _asked(text: str) -> set[int]:
    return {int(n) for n in re.findall(r"--steps (\d+)", text)}


def test_a_short_run_appended_moves_the_number_by_its_steps_weight_only() -> None:
    long = [_run(30, 1.0), _run(30, 4.0, n=2)]
    alone = _asked(_notes(long))
    # a 2-step run of the same configuration whose few steps read 2.5x faster: its own
    # extreme asked 2.5x the steps before; its 2 of 32 steps move the mean by ~10%
    both = _asked(_notes([*long, _run(2, 0.4)]))
    assert len(alone) == len(both) == 1, (alone, both)
    before, after = alone.pop(), both.pop()
    assert after >= before and after <= 1.15 * before, (before, after)


def test_the_basis_said_is_the_table_it_reads() -> None:
    """The basis says its ms a step are of the timed phase, which holds each kind of step
    (it said "at 2.69 ms a step" beside a table whose steps are 0.93 ms)."""
    records = [_run(30, 1.0), _run(30, 4.0, n=2), _run(2, 0.4)]
    table = bench_table(records)
    notes = " ".join(table["evidence_notes"].fillna(""))
    (asked,) = _asked(notes)
    said = re.search(
        r"--steps \d+ or more \(a timed phase of ([\d,.]+) ms, .*? at ([\d.]+) ms of timed "
        r"phase a step \(the synchronised, no-sync and, at N = 1, bare steps[^)]*\), as "
        r"mlp at N = 1 timed it over (\d+) steps in (\d+) runs\)",
        notes,
    )
    assert said, notes
    window_ms, per_ms, steps, runs = (float(g.replace(",", "")) for g in said.groups())
    window_s = window_ms / 1e3  # in the unit of the step beside it
    one = table[table["accelerators"] == 1]
    assert (steps, runs) == (one["steps"].sum(), len(one))
    # the timed phase at N = 1 holds the synchronised, no-sync and plain step: its mean
    timed = one["steps"] * (one["step_ms_mean"] + one["nosync_step_ms_mean"])
    timed += one["steps"] * one["plain_step_ms_mean"].fillna(0)
    mean = timed.sum() / one["steps"].sum()
    assert abs(per_ms - mean) <= 0.01 * per_ms  # as printed, to 3 figures
    assert window_s >= MIN_BUSY_WINDOW_S
    # the steps asked time that phase at that step, in tens: not 10 fewer
    assert asked * mean >= window_s * 1e3 > (asked - 10) * mean


def test_the_report_asks_what_the_bench_notes_ask(tmp_path: Path) -> None:
    # batch 16's runs are flagged (noisy steps) and fastest: the bench's notes ask what
    # they need too, as the table grades every ok run; the report leaves them out of
    # its findings, not out of the steps it asks
    noisy = _run(30, 0.3, batch=16)  # enough steps for a p95 to flag (NOISY_MIN_STEPS)
    noisy["timing"]["step_ms_p95"] = 3 * noisy["timing"]["step_ms_p50"]
    records = [_run(2, 2.0), _run(2, 6.0, n=2), noisy, _run(20, 2.0, n=2, batch=16)]
    table = bench_table(records)
    assert table["flagged"].any() and not table["flagged"].all()  # the premise
    asked = _asked(" ".join(table["evidence_notes"].fillna("")))
    assert len(asked) == 1, asked
    section = build_bench_section(table, FigureFiles(tmp_path))
    assert section is not None
    said = [f for f in section.findings if "What these findings rest on" in f]
    assert said and _asked(said[0]) == asked, (said, asked)
