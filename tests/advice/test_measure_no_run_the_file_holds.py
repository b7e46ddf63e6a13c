"""What the advice asks to bench is never a run its bench file holds already: a user's
file with runs of its model on 1 and 2 devices was told to measure the noise scale, or a
held-back count, with `gpuscale bench --models M --nproc 1,2` (the run it held), where
only more steps or a quieter machine would change anything; a held-back count was named
as 2 whatever it was. Each command the advice gives (explanation, caveats, the JSON's
assumptions and measure_first) that runs counts the file holds asks for steps none of its
runs timed (runs flagged are rerun on a quieter machine, at the steps they timed); a
held-back count is the one measured."""

from __future__ import annotations

import re

import pytest

import gpuscale
from gpuscale.advice.assumptions import settle
from gpuscale.advice.explain.as_json import advice_document
from gpuscale.advice.explain.phrasebook import said as words
from gpuscale.advice.explain.phrasebook import sentence
from gpuscale.advice.remeasure import again
from gpuscale.advice.types import maybe
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table
from gpuscale.bench.support import support

from ..builders import bench_record

DEFAULT_STEPS = BenchConfig().steps  # what a command without --steps times


def _records(steps: int) -> list[dict]:
    config = BenchConfig(steps=steps, batch=64)
    return [
        bench_record("m", 10**7, n, sps, config=config, batch=64, sync_overhead_ms=s)
        for n, sps, s in ((1, 1000.0, 0.0), (2, 1500.0, 2.0))
    ]


def _table(steps: int) -> object:
    return bench_table(_records(steps))


def _with_flagged_long_runs() -> object:
    """2-step runs, and runs of 550 steps flagged (noisy: a busy machine): the longer runs
    outlast the 2-step ones at both counts, so the file has no trustworthy N = 1 run and
    only a quieter machine (or ``allow_flagged``) would change that."""
    long = _records(550)
    for record in long:
        record["timing"]["step_ms_p95"] = 4 * record["timing"]["step_ms_p50"]
    return bench_table(_records(2) + long)


def _commands(advice: gpuscale.Advice) -> list[str]:
    document = advice_document(advice)
    said = [*advice.explanation, *advice.caveats, str(document["recommendation"])]
    said += [a["measure"] for a in document["assumptions"]]
    # a run of this version of the bench times what the file's older runs did not (the
    # bare module at two batches): not a run the file holds, and the sentence says so
    said = [s for s in said if "this version of the bench" not in s]
    return [c for s in said for c in re.findall(r"`(gpuscale bench [^`]*)`", s)]


@pytest.mark.parametrize("steps", [2, DEFAULT_STEPS, 400, 550])
def test_no_command_asks_for_a_run_the_file_holds(steps: int) -> None:
    table = _table(steps) if steps != 550 else _with_flagged_long_runs()
    if steps == 550:  # the premise: the long runs are flagged, the 2-step ones not
        assert table.groupby("steps")["flagged"].all().to_dict() == {2: False, 550: True}
    # a flagged run is held but not trusted: its rerun on a quieter machine, at the steps it
    # timed (never fewer), is the measurement asked for, not one the file holds
    trusted = table[~table["flagged"].astype(bool)]
    held = {
        (int(n), int(s)) for n, s in zip(trusted["accelerators"], trusted["steps"], strict=True)
    }
    if steps == 550:  # refused: the words ask for a quieter machine, no run the file holds
        with pytest.raises(ValueError, match="quieter machine") as refused:
            gpuscale.advise(bench=table)
        _check_not_held(re.findall(r"(gpuscale bench [^)`]*)", str(refused.value)), held)
    advice = gpuscale.advise(bench=table, allow_flagged=steps == 550)
    commands = _commands(advice)
    # the premise: the advice asks for runs at 1 and 2 devices, as a command or again
    again = "rerun the file's runs of m on 1 and 2 devices"
    assert any("--nproc 1,2" in c for c in commands) or again in str(advice_document(advice))
    _check_not_held(commands, held)


def _check_not_held(commands: list[str], held: set[tuple[int, int]]) -> None:
    """No command runs only (count, steps) pairs ``held`` has."""
    for command in commands:
        counts = re.search(r"--nproc ([\d,]+)", command)
        asked = re.search(r"--steps (\d+)", command)
        timed = int(asked.group(1)) if asked else DEFAULT_STEPS
        runs = {(int(n), timed) for n in counts.group(1).split(",")} if counts else set()
        assert not runs or not runs <= held, (command, sorted(held))


def test_the_held_back_count_is_the_one_named() -> None:
    said = maybe(words, settle((), strong=True, held_back=4, refused=False))
    assert said and "--nproc 1,4" in said, said


def test_a_wide_interval_at_counts_the_file_holds_asks_no_run_it_holds() -> None:
    # runs on 1 and 2 devices of 400 steps, firm: 400 is all the steps they need, so a
    # `--nproc 1,2 --steps 400` to measure 2 devices first is the run the file holds
    table = _table(400)
    found = support(table, table)
    assert found is not None and found.steps_needed == 400 and found.counts == (1, 2)
    said = {"width": 2.0, "devices": 2, "host": "", "again": again(found, (1, 2)), "across": None}
    wide = sentence("not_firm", firm=found.steps_needed, **said)
    assert "--steps 400" not in wide and "the file's runs of m on 1 and 2 devices" in wide


@pytest.mark.parametrize("steps", [2, 400])
def test_the_runs_to_bench_again_are_a_record_of_their_counts(steps: int) -> None:
    # 2 steps: more steps firm them up (the command asks for them); 400: all the steps they
    # need, so a quieter machine; none where the file holds no run at a count asked
    table = _table(steps)
    found = support(table, table)
    assert found is not None
    record = again(found, (1, 2))
    assert record is not None and record["counts"] == (1, 2) and record["model"] == "m"
    if steps == 2:
        assert record["case"] == "steps"
        assert f"--steps {found.steps_needed}" in str(record["command"])
    else:
        assert record["case"] == "quieter" and record["most_steps"] == 400
        assert record["flagged"] == 0 and record["read_spread"] is True
    assert again(found, (1, 4)) is None and again(None, (1, 2)) is None
