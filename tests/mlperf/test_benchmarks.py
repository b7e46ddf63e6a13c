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
