"""The remedy a refusal gives follows the kinds of flag present (a user walk: a bench file
whose only runs had a NaN loss was told to re-run on a quieter machine or to use the
runs with --allow-flagged; a broken model is told to fix its loss). A broken model is
never advised on, --allow-flagged or not (a later walk: --allow-flagged gave full advice
on NaN-loss runs, and a NaN loss beside a busy host was told "fix the model first, re-run
on a quieter machine ... or --allow-flagged")."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.calibrate.errors import CalibrationError
from gpuscale.advice.explain.caveats import flag_remedy
from gpuscale.bench.results_file import append_result
from gpuscale.cli import app
from gpuscale.plausibility import FlagKind, host_flags, loss_flags

from ..builders import bench_record
from ..golden import Golden

VIEW = "advice/flag_remedy"

NAN_LOSS = loss_flags(float("nan"))
BUSY = host_flags({"other_load_share": 0.6})


# What offers a way out other than the fix: a quieter host, or using the runs anyway.
WAYS_OUT = ("quieter", "allow flagged runs", "use them with a warning", "allow_flagged=True")


def _file(tmp_path: Path, *flags: list[str], model: str = "mlp-1m") -> Path:
    """A bench file of one model, a run per flag list (N = 1 and 2)."""
    path = tmp_path / "results.jsonl"
    for world, run_flags in zip((1, 2), flags, strict=False):
        append_result(path, bench_record(model, 1_000_000, world, 100.0, flags=run_flags))
    return path


def _refusal(tmp_path: Path, *flags: list[str], allow: bool = False) -> str:
    """The refusal of a bench file of one model, a run per flag list (N = 1 and 2)."""
    path = _file(tmp_path, *flags)
    with pytest.raises(CalibrationError) as refused:
        gpuscale.advise(bench=path, link="pcie4-x16", allow_flagged=allow)
    return " ".join(str(refused.value).split())


def _no_way_out_but_the_fix(said: str) -> None:
    assert "loss not finite" in said and "fix the model" in said.lower(), said
    assert not [w for w in WAYS_OUT if w in said], said


@pytest.mark.parametrize("allow", [False, True])
def test_a_broken_model_is_told_to_fix_its_loss_not_to_rerun_or_use_it(
    tmp_path: Path, allow: bool
) -> None:
    assert NAN_LOSS and NAN_LOSS[0].startswith("loss not finite")  # the premise
    _no_way_out_but_the_fix(_refusal(tmp_path, NAN_LOSS, NAN_LOSS, allow=allow))


@pytest.mark.parametrize("allow", [False, True])
@pytest.mark.parametrize("where", ["N = 1", "N = 2", "both"])
def test_a_broken_model_is_never_advised_on_whatever_the_flag(
    tmp_path: Path, allow: bool, where: str
) -> None:
    """--allow-flagged admits noisy runs, never those of a model whose loss was not finite:
    at N = 1 (no baseline), at N = 2 only (diverged there) or both, refused and told to fix
    the model; the CLI says the same."""
    flags = {"N = 1": (NAN_LOSS, []), "N = 2": ([], NAN_LOSS), "both": (NAN_LOSS, NAN_LOSS)}
    path = _file(tmp_path, *flags[where])
    with pytest.raises(CalibrationError) as refused:
        gpuscale.advise(bench=path, link="pcie4-x16", allow_flagged=allow)
    said = " ".join(str(refused.value).split())
    _no_way_out_but_the_fix(said)
    assert "mlp-1m is broken" in said
    args = ["advise", "--bench", str(path), "--interconnect", "pcie4-x16"]
    result = CliRunner().invoke(app, args + (["--allow-flagged"] if allow else []))
    assert result.exit_code != 0 and "predicted training" not in result.output
    _no_way_out_but_the_fix(" ".join(result.output.split()))


def test_allow_flagged_still_admits_a_busy_host(tmp_path: Path, golden: Golden) -> None:
    advice = gpuscale.advise(
        bench=_file(tmp_path, BUSY, BUSY), link="pcie4-x16", allow_flagged=True
    )
    assert advice.recommended >= 1
    used = [w for w in advice.decision.warnings if "allow_flagged=" in w]
    assert len(used) == 1 and "2 flagged runs" in used[0]
    golden.check(VIEW, "a busy host's runs allowed", used[0])


@pytest.mark.parametrize("allow", [False, True])
def test_a_sound_model_beside_a_broken_one_is_advised_on_alone(
    tmp_path: Path, allow: bool, golden: Golden
) -> None:
    """The broken model (the larger, so the default) is passed over and said so; asked
    for by name, it is refused."""
    path = tmp_path / "results.jsonl"
    for world in (1, 2):
        append_result(path, bench_record("mlp-1m", 1_000_000, world, 100.0 * world**0.8))
        flags = NAN_LOSS if world == 2 else []  # diverged at 2: its N = 1 run looks sound
        append_result(path, bench_record("mlp-4m", 4_000_000, world, 50.0, flags=flags))
    advice = gpuscale.advise(bench=path, link="pcie4-x16", allow_flagged=allow)
    assert advice.calibration is not None and advice.calibration.model.name == "mlp-1m"
    passed_over = [s for s in advice.explanation if "mlp-4m" in s]
    assert passed_over and "loss not finite" in " ".join(passed_over)
    case = "a broken model passed over" + (", flagged runs allowed" if allow else "")
    golden.check(VIEW, case, "\n".join(passed_over), paths={str(tmp_path): "<tmp>"})
    with pytest.raises(CalibrationError, match="mlp-4m is broken"):
        gpuscale.advise(bench=path, model="mlp-4m", link="pcie4-x16", allow_flagged=allow)


def test_the_remedy_for_a_broken_model_offers_no_other_way_out() -> None:
    said = flag_remedy([FlagKind.LOSS, FlagKind.BUSY, FlagKind.NOISY_SYNC, "bench too short"])
    assert said.startswith("fix the model first")
    assert not [w for w in WAYS_OUT if w in said], said
    assert "machine busy" in said  # the other flags are named, as for after the fix
    # an N > 1 run's baseline kind beside its N = 1 run's own (a table's flag summary)
    inherited = flag_remedy([FlagKind.BASELINE, FlagKind.LOSS, FlagKind.BUSY])
    assert inherited.startswith("fix the model first") and "quieter" not in inherited


def test_a_busy_host_is_told_to_rerun_or_allow(tmp_path: Path) -> None:
    said = _refusal(tmp_path, BUSY, BUSY)
    assert "quieter machine" in said and "allow_flagged=True" in said
    assert "fix the model" not in said


@pytest.mark.parametrize("allow", [False, True])
def test_a_broken_model_on_a_busy_host_is_told_only_to_fix_it(tmp_path: Path, allow: bool) -> None:
    """A NaN loss beside a busy host: fixing the model is the only way out; neither a
    quieter machine nor --allow-flagged is offered (the walk's file, both ways)."""
    _no_way_out_but_the_fix(_refusal(tmp_path, NAN_LOSS + BUSY, BUSY, allow=allow))


@pytest.mark.parametrize("loss", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_loss_written_as_a_number_is_a_broken_model_too(
    tmp_path: Path, loss: str
) -> None:
    """Another writer's row with ``"loss_last": NaN`` (json's NaN) and no flag was skipped
    as a malformed line ("loss_last is nan, not a finite number") and the advice went on
    from the model's other runs; written as gpuscale writes it (null and the flag) it was
    refused. Both forms are a broken model."""
    import json

    path = _file(tmp_path, [], [])
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[1]["loss_last"] = float(loss.replace("Infinity", "inf"))
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    assert loss in path.read_text()  # the premise: written as a bare number, unflagged
    assert not rows[1].get("flags")
    _no_way_out_but_the_fix(_refusal_of(path))


def _refusal_of(path: Path) -> str:
    with pytest.raises(CalibrationError) as refused:
        gpuscale.advise(bench=path, link="pcie4-x16", allow_flagged=True)
    return " ".join(str(refused.value).split())
