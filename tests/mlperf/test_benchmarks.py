"""Which workload a round's benchmark folder held, from the round's own ruleset."""

from __future__ import annotations

import pytest

from gpuscale.mlperf.benchmarks import quality_target, workload_in_round
from gpuscale.mlperf.ingest import read_round
from gpuscale.names import resolve_workloads

from .logbuilder import RoundBuilder

pytest.importorskip("mlperf_logging")


@pytest.mark.parametrize(
    ("folder", "round_name", "workload"),
    [
        ("ssd", "v0.7", "ssd_resnet34"),
        ("ssd", "v1.1", "ssd_resnet34"),
        ("ssd", "v2.0", "retinanet"),
        ("ssd", "v4.1", "retinanet"),
        ("retinanet", "v5.0", "retinanet"),
        ("gnn", "v4.1", "rgat"),
        ("bert", "v1.1", "bert"),
    ],
)
def test_workload_comes_from_the_rulesets_quality_target(
    folder: str, round_name: str, workload: str
) -> None:
    assert workload_in_round(folder, round_name) == workload


def test_ssd_targets_are_read_from_the_configs() -> None:
    assert quality_target("1.1.0", "ssd") == pytest.approx(0.23)
    assert quality_target("2.0.0", "ssd") == pytest.approx(0.34)


def test_v1_1_ssd_never_joins_retinanet(tmp_path) -> None:
    old = RoundBuilder(name="training_results_v1.1")
    old.system("Acme", "box").runs("Acme", "box", "ssd", [10, 11, 12, 13, 14])
    new = RoundBuilder(name="training_results_v4.1")
    new.system("Acme", "box").runs("Acme", "box", "ssd", [10, 11, 12, 13, 14])
    v11 = read_round(old.write_dir(tmp_path / "a"))
    v41 = read_round(new.write_dir(tmp_path / "b"))
    assert set(v11.runs["workload"]) == set(v11.scores["workload"]) == {"ssd_resnet34"}
    assert set(v41.scores["workload"]) == {"retinanet"}
    # Asked for RetinaNet, a user never gets the SSD-ResNet34 results.
    both = ["ssd_resnet34", "retinanet"]
    assert resolve_workloads(["retinanet"], both) == ["retinanet"]
    assert resolve_workloads(["SSD-ResNet34"], both) == ["ssd_resnet34"]


def test_ssd_with_both_meanings_loaded_is_refused_naming_both(tmp_path) -> None:
    """`-b ssd` with v0.7 (or v1.1) and a v3.0+ round loaded read as RetinaNet and dropped
    SSD-ResNet34 with only a note; now refused, each meaning's own name given. With one
    meaning loaded (or no data) `ssd` is still read as that one."""
    from typer.testing import CliRunner

    from gpuscale.cli import app
    from gpuscale.names import UnknownNameError

    both = ["ssd_resnet34", "retinanet"]
    with pytest.raises(UnknownNameError) as refused:
        resolve_workloads(["ssd"], both)
    assert "retinanet (RetinaNet) and ssd_resnet34 (SSD-ResNet34)" in str(refused.value)
    assert resolve_workloads(["ssd"], ["ssd_resnet34"]) == ["ssd_resnet34"]
    assert resolve_workloads(["ssd"], ["retinanet"]) == ["retinanet"]
    assert resolve_workloads(["ssd"]) == ["retinanet"]  # no data: today's ssd

    old = RoundBuilder(name="training_results_v1.1")
    old.system("Acme", "box").runs("Acme", "box", "ssd", [10, 11, 12, 13, 14])
    new = RoundBuilder(name="training_results_v4.1")
    new.system("Acme", "box").runs("Acme", "box", "ssd", [10, 11, 12, 13, 14])
    paths = [str(old.write_dir(tmp_path / "a")), str(new.write_dir(tmp_path / "b"))]
    result = CliRunner().invoke(app, ["analyze", *paths, "-b", "ssd"])
    assert result.exit_code != 0
    (line,) = [s for s in result.output.splitlines() if s.startswith("error:")]
    assert "give -b retinanet or -b ssd_resnet34" in line, result.output


@pytest.mark.parametrize(
    ("ruleset", "folder", "target"),
    [
        ("4.1.0", "llama2_70b_lora", 0.925),  # (v <= 0.925) and v > 0.0
        ("5.0.0", "llama31_405b", 5.6),
        ("3.0.0", "gpt3", 2.69),  # (v <= 2.69) and v > 2.6
        ("1.1.0", "rnnt", 0.058),  # v <= 0.058 and v > 0.0
        ("0.7.0", "bert", 0.712),  # (v >= 0.712 if s['global_batch_size'] < 8192 ...) and v < 1
        ("3.0.0", "dlrm_dcnv2", 0.80275),  # v >= 0.80275 and v <= 1.0
        ("4.1.0", "stable_diffusion", None),  # two chained ranges: no one target
    ],
)
def test_a_lower_is_better_target_is_its_bound_not_the_sanity_check(
    ruleset: str, folder: str, target: float | None
) -> None:
    """A loss or error rate is checked as `v <= target and v > 0.0`: the target was read as
    the first `>` bound, 0.0 (2.6 for GPT-3's 2.69), and shipped so in the plan's fits."""
    found = quality_target(ruleset, folder)
    assert found == (pytest.approx(target) if target is not None else None)


def test_the_shipped_plan_fits_carry_each_rounds_quality_target() -> None:
    from gpuscale.analysis.critical_batch import round_target
    from gpuscale.planning.cache import bundled_fits

    fits = bundled_fits()
    assert fits is not None
    for name, fit in fits["workloads"].items():
        if len(fit["benchmarks"]) != 1:  # ssd -> retinanet, gnn -> rgat: per round's folder
            continue
        for round_name, target in fit["targets"].items():
            assert target == round_target(round_name, fit["benchmark"]), (name, round_name)
    assert fits["workloads"]["llama2_70b_lora"]["targets"]["v5.0"] == pytest.approx(0.925)
