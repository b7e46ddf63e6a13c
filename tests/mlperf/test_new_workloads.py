"""MLPerf Training v6.0 and v6.1 before their rounds arrive: the workloads the 6.0.0 and
6.1.0 rules add (GPT-OSS 20B and DeepSeek-V3 671B, mixtures of experts; Qwen3.5 397B GRPO
and DLRMv4) read from synthetic logs that pass those rules: names, display names, the
result files the rules require, samples to converge as the RCP checker counts them (in
samples, plausible against the RCPs), the RCP fit, and the accelerator families."""

from __future__ import annotations

import pytest

from gpuscale.analysis.decompose import expected_samples
from gpuscale.mlperf.ingest import read_round
from gpuscale.mlperf.rcp import rcp_points
from gpuscale.mlperf.rules import benchmarks_of, result_file_counts
from gpuscale.names import resolve_workloads
from gpuscale.tables import display_name

from .synthetic_rounds import ruleset_round

pytest.importorskip("mlperf_logging")

NEW = {
    "6.0.0": {"gpt_oss_20b": ("GPT-OSS 20B", 10), "deepseekv3_671b": ("DeepSeek-V3 671B", 3)},
    "6.1.0": {"qwen35_397b_grpo": ("Qwen3.5 397B GRPO", 3), "dlrmv4": ("DLRMv4", 10)},
}


@pytest.fixture(scope="module", params=sorted(NEW))
def new_round(request, tmp_path_factory):
    ruleset = request.param
    root = ruleset_round(ruleset, list(NEW[ruleset])).write_dir(tmp_path_factory.mktemp("r"))
    return ruleset, read_round(root)


def test_the_rules_name_the_new_workloads() -> None:
    assert {"gpt_oss_20b", "deepseekv3_671b"} <= set(benchmarks_of("6.0.0"))
    six_one = set(benchmarks_of("6.1.0"))
    assert {"qwen35_397b_grpo", "dlrmv4"} <= six_one
    assert not {"llama31_405b", "dlrm_dcnv2"} & six_one  # dropped in 6.1.0


def test_new_workloads_are_scored_from_logs_of_their_rules(new_round) -> None:
    ruleset, tables = new_round
    counts = result_file_counts()
    assert tables.problems.empty, tables.problems.to_dict("records")
    for workload, (shown, runs) in NEW[ruleset].items():
        rows = tables.scores[tables.scores["workload"] == workload]
        assert len(rows) == 4 and rows["time_to_train_min"].notna().all()
        assert display_name(workload) == shown
        assert (rows["runs_required"] == runs).all() and counts[workload] == runs
        assert (rows["runs"] == runs).all() and (rows["kept_runs"] == max(runs - 2, 1)).all()


def test_their_samples_to_converge_are_samples_and_plausible(new_round) -> None:
    ruleset, tables = new_round
    round_name = "v" + ruleset.rsplit(".", 1)[0]
    for workload in NEW[ruleset]:
        rows = tables.scores[tables.scores["workload"] == workload]
        assert set(rows["convergence_unit"]) == {"samples"}
        assert set(rows["samples_to_converge_flag"]) == {""}
        points = rcp_points(ruleset, workload)
        low, high = min(e for _, e in points), max(e for _, e in points)
        for samples, batch in zip(
            rows["samples_to_converge"], rows["global_batch_size"], strict=True
        ):
            assert low / 2 <= samples <= high * 2
            expected = expected_samples(round_name, workload, batch)  # the RCP fit E(B)
            assert low / 2 <= expected <= high * 2


def test_their_systems_are_known_families(new_round) -> None:
    _, tables = new_round
    assert set(tables.systems["accelerator_family"]) <= {"GB300", "B300", "MI355X"}


@pytest.mark.parametrize(
    ("typed", "workload"),
    [
        ("gpt-oss", "gpt_oss_20b"),
        ("GPT-OSS 20B", "gpt_oss_20b"),
        ("deepseek", "deepseekv3_671b"),
        ("DeepSeek-V3", "deepseekv3_671b"),
        ("qwen", "qwen35_397b_grpo"),
        ("Qwen3.5 397B", "qwen35_397b_grpo"),
        ("dlrmv4", "dlrmv4"),
        ("DLRM v4", "dlrmv4"),
    ],
)
def test_people_can_name_them(typed: str, workload: str) -> None:
    folders = [*benchmarks_of("6.0.0"), *benchmarks_of("6.1.0")]
    assert resolve_workloads([typed], folders) == [workload]
