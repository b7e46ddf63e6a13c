"""``gpuscale.advise(bench=...)`` as a user calls it: a path or a DataFrame, flagged runs
listed (and usable with a warning), the noise scale and the power measured at each N."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale
from gpuscale.advice.calibrate.errors import CalibrationError
from gpuscale.advice.explain.phrasebook import measured
from gpuscale.advice.explain.phrasebook import said as words
from gpuscale.advice.types import FindingKind, TermId
from gpuscale.bench.config import BenchConfig
from gpuscale.bench.results import bench_table, read_results
from gpuscale.bench.results_file import append_result
from gpuscale.cli import app
from gpuscale.plausibility import NOISY_MIN_STEPS, SAME_SAMPLES

from ..builders import bench_record, one_and_two
from ..golden import Golden
from ..test_readme_examples import REFUSED
from .lines import lines_on

runner = CliRunner()
VIEW = "advice/bench_path"
BUSY = ["machine busy: other processes used 60% of its CPU time during the timed steps"]


def _results(tmp_path: Path, flags: list[str] | None = None, **extra) -> Path:
    path = tmp_path / "results.jsonl"
    # a run's own flags in ``one`` or ``two``, over ``flags``
    for record in one_and_two(
        "tf-7m", 6_870_000, extra.get("one"), extra.get("two"), flags=flags or []
    ):
        append_result(path, record)
    return path


def test_advise_takes_a_path_or_a_table(tmp_path: Path, golden: Golden) -> None:
    path = _results(tmp_path)
    by_path = gpuscale.advise(bench=str(path), link="pcie4-x16", max_devices=4)
    by_table = gpuscale.advise(
        bench=bench_table(read_results(path)[0]), link="pcie4-x16", max_devices=4
    )
    assert by_path.predictions.equals(by_table.predictions)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("{}\n")
    with pytest.raises(ValueError) as refused:
        gpuscale.advise(bench=empty)
    golden.check(
        VIEW, "a file of no bench results", str(refused.value), paths={str(tmp_path): "<tmp>"}
    )


def test_flagged_runs_are_listed_and_can_be_used_with_a_warning(
    tmp_path: Path, golden: Golden
) -> None:
    path = _results(tmp_path, flags=BUSY)
    with pytest.raises(CalibrationError) as refused:
        gpuscale.advise(bench=path, link="pcie4-x16")
    message = str(refused.value)
    golden.check(VIEW, "two busy runs refused", message)
    assert "allow_flagged=True" in message  # as Python names it
    # the phrase the docs' examples test recognises a busy host's refusal by, in Python
    # and on the CLI
    assert REFUSED.search(" ".join(message.split()))
    cli = runner.invoke(app, ["advise", "--bench", str(path), "--interconnect", "pcie4-x16"])
    assert REFUSED.search(" ".join(cli.stderr.split()))
    allowed = gpuscale.advise(bench=path, link="pcie4-x16", allow_flagged=True)
    kinds = [w.kind for w in allowed.decided.warnings]
    # the flagged runs said once; their few steps (no busy share recorded here) beside it
    assert kinds == [FindingKind.ALLOWED_FLAGGED, FindingKind.WEAK_EVIDENCE]
    assert all(m.flagged and m.allowed for m in allowed.calibration.runs.measured)
    golden.check(VIEW, "two busy runs used", allowed.decision.warnings[0])
    cli = CliRunner().invoke(
        app,
        [
            "advise",
            "--bench",
            str(path),
            "--interconnect",
            "pcie4-x16",
            "--allow-flagged",
            "--explain",
        ],
    )
    # the command says the same warning, the option named as the command line names it
    shell = replace(allowed, keywords=False).decision.warnings
    said = shell[0]  # the flagged runs' (the kinds above)
    assert cli.exit_code == 0 and " ".join(said.split()) in " ".join(cli.stdout.split())


def test_runs_of_several_flags_are_said_as_runs_and_flags(tmp_path: Path, golden: Golden) -> None:
    """Two runs each busy and noisy (the N = 2 run's baseline flagged too) read "2 runs were
    left out as flagged: machine busy (2 runs ...); noisy synchronised steps (2 runs ...);
    N = 1 run flagged (1 run ...)", five by the flags' counts: the flags are counted apart."""
    noisy = "noisy synchronised steps: p95 20 ms is 1.8x the median (> 1.5x)"
    # timed over NOISY_MIN_STEPS: a noisy flag stored on fewer is judged again when read
    timed = {"config": BenchConfig(steps=NOISY_MIN_STEPS)}
    path = _results(tmp_path, flags=[*BUSY, noisy], one=timed, two=timed)
    with pytest.raises(CalibrationError) as refused:
        gpuscale.advise(bench=path, link="pcie4-x16")
    left = refused.value.left
    assert left is not None and left.left == 2
    assert [n for _, n, _ in left.flags] == [2, 2, 1]
    golden.check(VIEW, "two runs of two flags refused", str(refused.value))


def test_a_row_lacking_a_field_the_others_have_is_read(tmp_path: Path) -> None:
    """An older row without ``grad_comm`` beside rows that have it: its configuration's key
    took the missing value as a float, which the join refused (a TypeError traceback)."""
    records = one_and_two("tf-7m", 6_870_000, flags=BUSY)
    del records[0]["config"]["grad_comm"]
    path = tmp_path / "results.jsonl"
    for record in records:
        append_result(path, record)
    allowed = gpuscale.advise(bench=path, link="pcie4-x16", allow_flagged=True)
    assert allowed.calibration.runs.one_step_ms == pytest.approx(7.0)  # the N = 1 run's
    with pytest.raises(CalibrationError) as refused:
        gpuscale.advise(bench=path, link="pcie4-x16")
    assert refused.value.left is not None and refused.value.left.left == 2


def _noise(steps: int) -> dict:
    """Gradient norms over ``steps`` steps: |g|^2 at 8 samples, at 16 (G^2 = 0.1,
    tr(Sigma) = 9.6 -> B_simple 96)."""
    local = ([1.3, 1.25, 1.35, 1.3] * steps)[:steps]
    glob = ([0.7, 0.68, 0.72, 0.7] * steps)[:steps]
    return {"batch_small": 8, "batch_big": 16, "local_sq": local, "global_sq": glob}


def test_advise_uses_the_measured_noise_scale(tmp_path: Path, golden: Golden) -> None:
    noise = _noise(12)
    advice = gpuscale.advise(bench=_results(tmp_path, two={"noise": noise}), link="pcie4-x16")
    assert advice.calibration.search.convergence is not None
    assert advice.calibration.search.convergence.b_noise == pytest.approx(96, rel=0.01)
    assert "measured" in advice.calibration.search.convergence.source
    golden.check(VIEW, "the noise scale's source", advice.calibration.search.convergence.source)


def test_a_noise_scale_from_few_steps_chooses_no_batch(tmp_path: Path, golden: Golden) -> None:
    """A user walk: from a 2-step bench the advice said "Use 1 device, per-device batch
    8 x 2 accumulation steps", the accumulation chosen by a noise scale measured over 2
    steps. Under FEW_NOISE_STEPS steps it prices no batch: none is searched, no
    accumulation advised, and the advice says why and what to bench instead."""
    from gpuscale.advice.model.priors import FEW_NOISE_STEPS

    steps = FEW_NOISE_STEPS - 6
    path = _results(tmp_path, two={"noise": _noise(steps)})
    advice = gpuscale.advise(bench=path, link="pcie4-x16", max_devices=4)
    assert advice.calibration.search.convergence is None
    assert (advice.predictions["accum"] == 1).all()
    assert advice.predictions["global_batch"].nunique() == 1  # the batch benched, kept
    said = [a for a in advice.calibration.said.assumptions if a.term == TermId.CONVERGENCE]
    basis, measure = words(said[0].basis), measured(said[0].measure)
    assert f" {steps} steps" in basis and "--steps" in measure
    golden.check(
        VIEW,
        "a noise scale over too few steps",
        f"{basis}\n{measure}",
        paths={str(tmp_path): "<tmp>"},
    )
    # a noise scale the user gives is used whatever the bench measured
    given = gpuscale.advise(bench=path, link="pcie4-x16", noise_scale=96.0)
    assert given.calibration.search.convergence is not None


def test_energy_at_a_measured_n_is_the_power_measured_there(tmp_path: Path, golden: Golden) -> None:
    # RAPL: the package draws 30 W with one rank and 33 W with two (16.5 W a rank)
    path = _results(
        tmp_path,
        one={"power_w": 30.0, "power_w_total": 30.0},
        two={"power_w": 16.5, "power_w_total": 33.0},
    )
    # weak scaling: every count runs the batch measured (8); the whole job's power measured
    # at N = 2 is of batch 8, so a count at another batch is not charged it
    frame = gpuscale.advise(bench=path, link="pcie4-x16", max_devices=4, scaling="weak")
    frame = frame.predictions.set_index("accelerators")
    assert (frame["batch_per_device"] == 8).all()
    for n, watts in ((1, 30.0), (2, 33.0), (4, 4 * 30.0)):
        assert frame.loc[n, "energy_kwh"] == pytest.approx(
            frame.loc[n, "time_to_train_min"] / 60 * watts / 1e3
        )
    # and each row says which power it was charged
    sources = "\n".join(f"{n}: {frame.loc[n, 'energy_source']}" for n in (1, 2, 4))
    golden.check(VIEW, "the power charged at each count, weak scaling", sources)
    assert "4 devices" in frame.loc[4, "energy_source"]


def test_contention_comes_from_the_most_specific_rows_that_measured_it(
    tmp_path: Path, golden: Golden
) -> None:
    """An mlp at N = 2 slowed 1.5x, a transformer 1.1x: a transformer without its own N = 2
    run takes its family's figure, not the other family's, and says so."""
    path = tmp_path / "results.jsonl"
    for name, family, params, world, nosync in (
        ("mlp-1m", "mlp", 1_000_000, 1, 10.0),
        ("mlp-1m", "mlp", 1_000_000, 2, 15.0),
        ("tf-1.5m", "transformer", 1_500_000, 1, 20.0),
        ("tf-1.5m", "transformer", 1_500_000, 2, 22.0),
        ("tf-7m", "transformer", 6_870_000, 1, 40.0),
    ):
        record = bench_record(
            name,
            params,
            world,
            1000.0,
            forward_ms=nosync / 3,
            backward_ms=nosync * 2 / 3,
            optimizer_ms=0.0,
            family=family,
        )
        append_result(path, record)
    advice = gpuscale.advise(bench=path, model="tf-7m", link="pcie4-x16", max_devices=2)
    assert dict(advice.calibration.model.compute.slowdown)[2] == pytest.approx(1.1)
    golden.check(VIEW, "contention from the family", lines_on(advice.explanation, "Calibrated"))
    only_one = tmp_path / "one.jsonl"
    append_result(
        only_one,
        bench_record(
            "tf-7m", 6_870_000, 1, 1000.0, forward_ms=1.0, backward_ms=2.0, optimizer_ms=0.0
        ),
    )
    alone = gpuscale.advise(bench=only_one, link="pcie4-x16", max_devices=2)
    assert alone.calibration.runs.measured == ()
    said = lines_on(alone.explanation, "Calibrated", "Step interval")
    golden.check(VIEW, "contention extrapolated from N = 1", said)


def test_cpu_devices_are_processes_of_this_host(
    tmp_path: Path, monkeypatch, golden: Golden
) -> None:
    """CPU (gloo) rows: the count is capped at cores / threads per process, the link
    named as unknown; the same rows as GPU rows keep 8 devices on pcie-phb."""
    path = tmp_path / "cpu.jsonl"
    append_result(path, bench_record("mlp-1m", 1_000_000, 1, 1000.0, threads=3))
    for cores in ("usable_cores", "host_cores"):  # this host's: 7, its affinity all of them
        monkeypatch.setattr(f"gpuscale.advice.calibrate.link.{cores}", lambda: 7)
    cpu = gpuscale.advise(bench=path)
    assert list(cpu.predictions["accelerators"]) == [1, 2]  # 7 cores // 3 threads
    text = " ".join(cpu.explanation)
    assert "capped at 2" in text and "unknown" in text
    assert cpu.calibration.machine.network.name == "CPU processes"
    said = lines_on(cpu.explanation, "Link:", "Device count capped")
    golden.check(VIEW, "CPU processes capped by the cores", said)
    assert gpuscale.advise(bench=path, max_devices=1).predictions["accelerators"].max() == 1
    asked = gpuscale.advise(bench=path, max_devices=4)  # asked for: kept, and said
    assert asked.predictions["accelerators"].max() == 4
    said = lines_on(asked.explanation, "This host runs at most")
    golden.check(VIEW, "more CPU processes asked than cores", said)
    given = gpuscale.advise(bench=path, link="pcie4-x16")
    assert given.calibration.machine.network.name == "pcie4-x16"
    gpu = bench_table(read_results(path)[0]).assign(device="cuda", device_name="NVIDIA H100")
    on_gpu = gpuscale.advise(bench=gpu)
    assert on_gpu.predictions["accelerators"].max() == 8
    assert on_gpu.calibration.machine.network.name == "pcie-phb"


def test_contended_backward_still_hides_the_communication_it_measured(tmp_path: Path) -> None:
    """N = 2 three times slower (shared cores) with 4 ms of communication fully hidden
    (exposed 0): the N = 1 backward (2 ms) must not cap what the slower one hid."""
    path = tmp_path / "contended.jsonl"
    for world, scale, comm in ((1, 1.0, None), (2, 3.0, 4.0)):
        record = bench_record(
            "m",
            1_000_000,
            world,
            100.0,
            forward_ms=1.0 * scale,
            backward_ms=2.0 * scale,
            optimizer_ms=0.5 * scale,
            comm_ms=comm,
        )
        append_result(path, record)
    advice = gpuscale.advise(bench=path, link="pcie4-x16", max_devices=2, scaling="weak")
    two = advice.predictions.set_index("accelerators").loc[2]
    assert two["exposed_comm_ms"] == pytest.approx(0.0, abs=1e-9)
    assert two["step_ms"] == pytest.approx(10.5)  # its own measured step


def test_a_refusal_says_what_would_help(tmp_path: Path, golden: Golden) -> None:
    """No N = 1 run: bench with one (allowing flagged runs cannot help, so it is not
    offered); nothing measured: why the runs failed."""
    only_three = tmp_path / "three.jsonl"
    append_result(only_three, bench_record("m", 10**6, 3, 1000.0, flags=BUSY))
    with pytest.raises(CalibrationError) as refused:
        gpuscale.advise(bench=only_three)
    assert "--nproc 1," in str(refused.value) and "allow" not in str(refused.value)
    golden.check(VIEW, "no N = 1 run", str(refused.value))
    failed = tmp_path / "failed.jsonl"
    error = "m:make raised ValueError: nope"
    append_result(failed, bench_record("m", 10**6, 1, 0.0, status="error", error=error))
    with pytest.raises(CalibrationError) as failed_refused:
        gpuscale.advise(bench=failed)
    assert error in str(failed_refused.value)
    golden.check(VIEW, "no run measured anything", str(failed_refused.value))


@pytest.mark.parametrize("flags", [None, BUSY], ids=["trusted", "flagged"])
def test_a_model_name_not_in_the_file_is_said_with_the_names_it_holds(
    tmp_path: Path, flags: list[str] | None, golden: Golden
) -> None:
    path = _results(tmp_path, flags=flags)
    with pytest.raises(CalibrationError) as wrong:
        gpuscale.advise(bench=path, model="make", link="pcie4-x16")
    message = str(wrong.value)
    assert "'make'" in message and "tf-7m" in message
    assert "quieter" not in message and "--allow-flagged" not in message
    # the same words whether the runs were flagged or not
    golden.check(VIEW, "a model name not in the file", message, paths={str(tmp_path): "<tmp>"})
    with pytest.raises(CalibrationError) as typo:
        gpuscale.advise(bench=path, model="tf-7n", link="pcie4-x16")
    assert "'tf-7m'" in str(typo.value)
    golden.check(
        VIEW, "a model name one letter off", str(typo.value), paths={str(tmp_path): "<tmp>"}
    )
    cli = CliRunner().invoke(app, ["advise", "--bench", str(path), "--model", "tf7m"])
    assert cli.exit_code != 0
    said = " ".join(cli.output.split())
    assert "'tf-7m'" in said and "quieter" not in said and "Traceback" not in said
    golden.check(VIEW, "a model name one letter off, command", said, paths={str(tmp_path): "<tmp>"})


def test_a_model_not_in_a_file_names_the_file_as_every_refusal_does(
    tmp_path: Path, golden: Golden
) -> None:
    """`--model x` not in `my runs.jsonl`: the file named quoted, as a shell word (where it
    ends is clear), as every other refusal names it."""
    path = _results(tmp_path).rename(tmp_path / "my runs 'ü'.jsonl")
    cli = CliRunner().invoke(app, ["advise", "--bench", str(path), "--model", "tf7m"])
    assert cli.exit_code == 2
    said = cli.stderr
    golden.check(
        VIEW, "a model not in a file whose name needs quotes", said, paths={str(tmp_path): "<tmp>"}
    )


def test_a_fixed_cost_entered_with_bench_results_replaces_the_measured_split(
    tmp_path: Path, golden: Golden
) -> None:
    """--fixed-ms with --bench: 5 of the bench's 6 ms forward + backward at batch 8 does not
    shrink with the batch, so 2 devices splitting the batch compute 5 + 1/2 ms and the
    optimizer's 1 ms; the measured one-device step is kept. Above the step: refused."""
    path = _results(tmp_path)
    entered = gpuscale.advise(bench=str(path), fixed_ms=5, link="pcie4-x16", max_devices=2)
    plain = gpuscale.advise(bench=str(path), link="pcie4-x16", max_devices=2)
    fixed = entered.calibration.model.fixed
    assert (fixed.source, fixed.ms, fixed.basis["field"]) == ("entered", 5, "fixed_ms")
    one, two = (entered.predictions.set_index("accelerators").loc[n] for n in (1, 2))
    assert one["compute_ms"] == pytest.approx(plain.predictions["compute_ms"].iloc[0])
    assert (two["batch_per_device"], two["compute_ms"]) == (4, pytest.approx(5 + 0.5 + 1))
    said = {a.term: a for a in entered.calibration.said.assumptions}[TermId.FIXED]
    assert (words(said.value), said.source) == ("5 ms", "entered")
    with pytest.raises(ValueError) as above:
        gpuscale.advise(bench=str(path), fixed_ms=7, link="pcie4-x16")
    assert "fixed_ms=7" in str(above.value)
    golden.check(VIEW, "a fixed cost above the step, Python", str(above.value))
    typed = runner.invoke(app, ["advise", "--bench", str(path), "--fixed-ms", "7"])
    assert typed.exit_code != 0 and "--fixed-ms" in typed.output
    assert "Traceback" not in typed.output
    said = " ".join(typed.output.split())
    golden.check(VIEW, "a fixed cost above the step, command", said[said.index("--fixed-ms") :])


def test_same_sample_ranks_are_named_where_the_noise_scale_is_missing(
    tmp_path: Path, golden: Golden
) -> None:
    """A bench whose N = 2 run was flagged for ranks that saw the same samples: the
    advice does not ask for the bench the user just ran (--nproc 1,2) as the measure of
    convergence; it says why there is no noise scale and what to change first."""
    path = _results(tmp_path, two={"flags": [SAME_SAMPLES]})
    for allow in (False, True):
        advice = gpuscale.advise(bench=str(path), link="pcie4-x16", allow_flagged=allow)
        said = {a.term: a for a in advice.calibration.said.assumptions}
        converge = said[TermId.CONVERGENCE]
        assert advice.calibration.search.convergence is None
        # the same words whether the flagged run was used or not
        golden.check(
            VIEW,
            "same-sample ranks, no noise scale",
            f"{words(converge.basis)}\n{measured(converge.measure)}",
            paths={str(tmp_path): "<tmp>"},
        )
    (tmp_path / "clean").mkdir()
    clean = gpuscale.advise(bench=str(_results(tmp_path / "clean")), link="pcie4-x16")
    converge = {a.term: a for a in clean.calibration.said.assumptions}[TermId.CONVERGENCE]
    basis, measure = words(converge.basis), measured(converge.measure)
    assert "same samples" not in basis and "--noise-scale" in measure


def test_the_one_batch_measured_is_measured_not_modelled(tmp_path: Path) -> None:
    """A user walk: a bench at one per-device batch said "measured at per-device batch
    8 only", and its N = 1 row at that batch read ``compute_source`` ``modelled``: only a
    fit through two or more batches kept its batches as measured."""
    advice = gpuscale.advise(bench=_results(tmp_path), link="pcie4-x16", max_devices=2)
    one = advice.predictions.set_index("accelerators").loc[1]
    measured = read_results(tmp_path / "results.jsonl")[0][0]["config"]["batch_per_device"]
    assert one["batch_per_device"] == measured
    assert one["compute_source"] == "measured"


def test_contention_measured_at_fewer_devices_is_carried_to_more(
    tmp_path: Path, golden: Golden
) -> None:
    """A bench whose N = 2 run measured its no-sync step x3 over N = 1 and whose N = 4 run
    x1.05 (one of them noise): the advice predicted 20.3 ms a step on 2 devices and
    10.2 ms on 4. Each count is now taken as slow as the slowest at fewer devices, and the
    warning says the measurements disagree."""
    path = tmp_path / "results.jsonl"
    for world, nosync, overhead, comm in (
        (1, 6.0, 0.5, None),
        (2, 18.0, 2.5, 2.0),
        (4, 6.3, 3.5, 3.0),
    ):
        record = bench_record(
            "mlp-1m",
            1_000_000,
            world,
            1000.0,
            forward_ms=nosync / 3,
            backward_ms=nosync * 2 / 3 - 0.5,
            optimizer_ms=0.5,
            sync_overhead_ms=overhead,
            comm_ms=comm,
        )
        append_result(path, record)
    advice = gpuscale.advise(bench=path, link="pcie4-x16", max_devices=8, scaling="weak")
    frame = advice.predictions
    assert (frame["batch_per_device"] == frame["batch_per_device"].iloc[0]).all()
    assert (frame["accum"] == 1).all()  # the same work per device per step at every N
    assert frame["step_ms"].is_monotonic_increasing
    assert (frame["compute_ms"] + frame["wait_ms"]).is_monotonic_increasing
    warning = [w for w in advice.decision.warnings if "less contention at more devices" in w]
    assert len(warning) == 1
    slowdown = dict(advice.calibration.model.compute.slowdown)
    # the measurements the warning names: x3 at N = 2, x1.05 at N = 4
    assert (slowdown[2], slowdown[4]) == (pytest.approx(3.0), pytest.approx(1.05))
    golden.check(VIEW, "contention measured less at more devices", warning[0])


def test_a_whole_job_measured_at_another_batch_is_not_charged(
    tmp_path: Path, golden: Golden
) -> None:
    """Strong scaling runs N = 2 at batch 4; the whole job's 33 W was measured at batch 8:
    the count is charged the N = 1 watts (its batch's nearest, 8) x 2, said so."""
    path = _results(
        tmp_path,
        one={"power_w": 30.0, "power_w_total": 30.0},
        two={"power_w": 16.5, "power_w_total": 33.0},
    )
    frame = gpuscale.advise(bench=path, link="pcie4-x16", max_devices=2, scaling="strong")
    row = frame.predictions.set_index("accelerators").loc[2]
    assert row["batch_per_device"] == 4
    watts = row["energy_kwh"] * 1e3 / (row["time_to_train_min"] / 60)
    assert watts == pytest.approx(2 * 30.0)
    assert "whole job" not in row["energy_source"] and "batch 8" in row["energy_source"]
    golden.check(VIEW, "the power charged at 2 devices, strong scaling", row["energy_source"])


def test_a_cut_bench_file_is_said_in_the_default_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, golden: Golden
) -> None:
    """A results file whose last line was cut short (a sweep killed mid-write): `analyze`
    and `report` say the line skipped by default, and so does `advise` (its answer's
    lines, and -f json's warnings), not only under --explain; said once there. Run in the
    file's folder, so that no long temporary path is wrapped inside the answer's lines."""
    path = _results(tmp_path)
    whole = path.read_text()
    with path.open("a") as out:
        out.write(whole.splitlines()[-1][:80])  # a line cut short, no newline
    monkeypatch.chdir(tmp_path)
    shown = runner.invoke(app, ["advise", "--bench", path.name, "--interconnect", "nvlink3"])
    assert shown.exit_code == 0, shown.output
    advice = gpuscale.advise(bench=path.name, link="nvlink3")
    skipped = [w for w in advice.decision.warnings if f"{path.name}:3" in w]
    assert len(skipped) == 1
    golden.check(VIEW, "a cut line skipped", skipped[0])
    said = " ".join(skipped[0].split())
    answer = " ".join(shown.output.split("predicted training of")[0].split())
    assert said in answer, shown.output
    explained = runner.invoke(
        app, ["advise", "--bench", path.name, "--interconnect", "nvlink3", "--explain"]
    )
    assert " ".join(explained.output.split()).count(said) == 1, explained.output
