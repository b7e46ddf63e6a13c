"""Each kind of flag is told its own remedy (``plausibility.REMEDIES``, the one mapping):
a device count measured only by a run flagged ``samples under batch`` was told "remeasure
on a quiet machine", which does not stop make_batch repeating samples (more samples or a
smaller --batch does). The bench's flags say the same remedy as the advice."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.advice.explain.caveats import flag_remedy, measure_first
from gpuscale.bench.support import Support
from gpuscale.cli import app
from gpuscale.plausibility import (
    HOST_NOISE,
    LOSS_NOT_FINITE,
    QUIETER,
    REMEDIES,
    FlagKind,
    loss_flags,
    no_warmup,
    peak_flags,
    remedies,
    run_flags,
    samples_flags,
    superlinear_flag,
)

BENCH = Path(__file__).parent / "cpu_mlp_slower_gloo.jsonl"
REPEATED = samples_flags({"samples_drawn": 16, "samples_distinct": 8})  # as the bench writes it
SAMPLES = REMEDIES[FlagKind.SAMPLES_UNDER_BATCH]


def _flagged_at_two(tmp_path: Path, flags: list[str]) -> Path:
    """The CPU bench of 1 and 2 processes, its N = 2 run flagged with ``flags``."""
    rows = [json.loads(line) for line in BENCH.read_text().splitlines()]
    assert rows[1]["config"]["accelerators"] == 2 and not rows[1]["flags"]  # the premise
    rows[1]["flags"] = flags
    path = tmp_path / "flagged.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def _measured_at_two(path: Path) -> str:
    """The answer's sentence on the 2 devices measured by flagged runs only."""
    result = CliRunner().invoke(app, ["advise", "--bench", str(path), "-f", "json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)["answer"]
    (said,) = [line for line in answer if line.startswith("Measured on 2 devices")]
    return said


def test_a_count_measured_by_repeated_samples_only_is_told_their_remedy(tmp_path: Path) -> None:
    said = _measured_at_two(_flagged_at_two(tmp_path, REPEATED))
    assert FlagKind.SAMPLES_UNDER_BATCH.value in said and SAMPLES in said
    assert "quiet" not in said  # a quieter machine repeats the same samples


def test_a_count_measured_by_a_busy_host_only_is_told_a_quieter_machine(tmp_path: Path) -> None:
    busy = run_flags({}, {"other_load_share": 0.6})
    said = _measured_at_two(_flagged_at_two(tmp_path, busy))
    assert QUIETER in said and SAMPLES not in said


def test_every_kind_but_an_inherited_one_has_a_remedy() -> None:
    """A kind added without a remedy would be told nothing; BASELINE is its N = 1 run's."""
    assert set(FlagKind) - set(REMEDIES) == {FlagKind.BASELINE}
    assert all(REMEDIES.values())
    assert remedies([FlagKind.BASELINE]) == [] and remedies(["bench too short"]) == []


def test_the_bench_flags_say_the_remedy_the_advice_says() -> None:
    """Where the bench's flag says what to do, it is the mapping's remedy, word for word."""
    noisy = run_flags({"step_ms_p50": 10.0, "step_ms_p95": 30.0}, None, steps=30)
    repeats = run_flags({"repeat_spread": 0.9, "repeat_samples_per_s": [185.0, 2046.0]}, None)
    one_rank = superlinear_flag(1.5, 1)
    written = {
        FlagKind.SAMPLES_UNDER_BATCH: REPEATED[0],
        FlagKind.NO_WARMUP: no_warmup(),
        FlagKind.NOISY_SYNC: noisy[0],
        FlagKind.REPEATS: repeats[0],
        FlagKind.BUSY: run_flags({}, {"other_load_share": 0.6})[0],
        FlagKind.ONE_RANK_FASTER: one_rank or "",
        FlagKind.ABOVE_PEAK: peak_flags(2000.0, 989.0)[0],
        FlagKind.LOSS: loss_flags(float("nan"))[0],
    }
    for kind, flag in written.items():
        assert REMEDIES[kind] in flag, (kind, flag)
    assert written[FlagKind.LOSS].startswith(LOSS_NOT_FINITE)


@pytest.mark.parametrize("kind", sorted(set(FlagKind) - {FlagKind.BASELINE, FlagKind.LOSS}))
def test_a_refusal_tells_each_kind_its_own_remedy(kind: FlagKind) -> None:
    said = flag_remedy([kind, FlagKind.BASELINE])
    assert said.startswith(REMEDIES[kind]), said
    assert (QUIETER in said) == (kind in HOST_NOISE)  # a quieter machine only for noise
    assert "--allow-flagged" in said  # still a way out


def test_measure_first_names_each_kind_its_remedy_the_quieter_machine_last() -> None:
    """Flagged runs used with --allow-flagged, none trusted: the command comes after what
    clears their flags, a quieter machine (where the command is run) last."""
    kinds = (FlagKind.BUSY.value, FlagKind.SAMPLES_UNDER_BATCH.value)
    found = Support(2, 100, untrusted=2, flag_kinds=kinds, model="mlp-0.2m", counts=(1, 2))
    said = measure_first(found) or ""
    command = said.index("`gpuscale bench")
    assert said.index(SAMPLES) < said.index(QUIETER) < command
    unknown = Support(2, 100, untrusted=2, flag_kinds=("bench too short",), model="m")
    assert "(bench too short)" in (measure_first(unknown) or "")  # as their flags say
