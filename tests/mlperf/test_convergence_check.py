"""Samples to converge that cannot be true are flagged where the scores are made, with
their reason, and kept out of the analysis built on them; the unit travels with the
number (samples, epochs or steps, as the round's ruleset counts them)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.cli import app
from gpuscale.mlperf.ingest import read_round
from gpuscale.plausibility import samples_to_converge_flag
from gpuscale.tables import convergence_unit

from .logbuilder import RoundBuilder

pytest.importorskip("mlperf_logging")


def _round(name: str, benchmark: str, per_org: dict[str, float], runs: int = 10) -> RoundBuilder:
    """One system per organisation (8, 16, 32... accelerators), each logging ``samples``."""
    rb = RoundBuilder(name=f"training_results_{name}")
    for k, (org, samples) in enumerate(per_org.items()):
        nodes = 2**k
        rb.system(org, "box", nodes=str(nodes))
        rb.runs(
            org, "box", benchmark, [60.0 / nodes + 0.1 * i for i in range(runs)], samples=samples
        )
    return rb


def _flags(tables) -> dict[str, str]:
    return dict(zip(tables.scores["org"], tables.scores["samples_to_converge_flag"], strict=True))


def test_bert_logging_one_where_others_log_millions_is_flagged(tmp_path: Path) -> None:
    """v2.0 BERT: Baidu and Samsung log samples_to_converge = 1.0, every other
    submitter ~2.5-3M: their value is flagged and in no decomposition."""
    per_org = {"NVIDIA": 2.6e6, "Baidu": 1.0, "Dell": 2.7e6, "Samsung": 1.0}
    tables = read_round(_round("v2.0", "bert", per_org).write_dir(tmp_path))
    flags = _flags(tables)
    assert flags["NVIDIA"] == flags["Dell"] == ""
    for org in ("Baidu", "Samsung"):
        assert "outside what the reference convergence points of ruleset 2.0.0" in flags[org]
        assert "1 sample is more than" in flags[org]  # (it read "1 samples")
    said = tables.problems[tables.problems["kind"] == "impossible value"]
    assert sorted(p.split("/")[0] for p in said["path"]) == ["Baidu", "Samsung"]
    # the measured basis: the logged samples themselves (the default basis, the RCPs'
    # expected samples at each batch, would not read the logged counts at all)
    options = AnalysisOptions(n_boot=100, convergence_basis="measured")
    table = analyze(tables, ["bert"], options)[0].table.set_index("org")
    # NVIDIA (8 accelerators) is the reference: its own samples, the only usable ones
    assert table.loc["Dell", "convergence_factor"] == pytest.approx(2.6e6 / 2.7e6)
    for org in ("Baidu", "Samsung"):
        assert table.loc[org, "convergence_factor"] != table.loc[org, "convergence_factor"]
        assert table.loc[org, "throughput_per_s"] != table.loc[org, "throughput_per_s"]
        assert (
            table.loc[org, "samples_per_s_per_accelerator"]
            != table.loc[org, "samples_per_s_per_accelerator"]
        )
        assert table.loc[org, "samples_to_converge"] == 1.0  # the value stays, flagged


def test_v07_bert_units_mixed_across_submitters_are_all_flagged(tmp_path: Path) -> None:
    """v0.7 has no RCPs: BERT is checked against the nearest ruleset's (1.0.0), which
    count the same workload in the same unit (samples); 1 to 11,718 are not samples."""
    per_org = {"A": 1.0, "B": 11718.0, "C": 3.0, "D": 250.0}
    tables = read_round(_round("v0.7", "bert", per_org).write_dir(tmp_path))
    flags = _flags(tables)
    assert all("reference convergence points of ruleset 1.0.0" in f for f in flags.values())


def test_without_rcps_a_value_far_from_the_other_submitters_is_flagged(tmp_path: Path) -> None:
    """GNMT (v0.7 only) has no RCPs in any ruleset: the round's other submitters decide."""
    per_org = {"A": 3.0, "B": 4.0, "C": 3.5, "D": 350.0}
    tables = read_round(_round("v0.7", "gnmt", per_org).write_dir(tmp_path))
    flags = _flags(tables)
    assert flags["A"] == flags["B"] == flags["C"] == ""
    assert "from the median of the round's 3 other submitters (3.5 epochs)" in flags["D"]


def test_rgat_in_epochs_says_epochs_everywhere(tmp_path: Path) -> None:
    """v5.1 R-GAT counts epochs (0.94): plausible, not flagged, and every output says
    epochs: the scores, the analysis CSV and its throughput (epochs per second)."""
    per_org = {"A": 0.94, "B": 0.9}
    root = _round("v5.1", "rgat", per_org).write_dir(tmp_path)
    tables = read_round(root)
    assert set(tables.scores["convergence_unit"]) == {"epochs"}
    assert set(tables.scores["samples_to_converge_flag"]) == {""}
    result = CliRunner().invoke(app, ["analyze", str(root), "-b", "rgat", "-f", "csv"])
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0].split(",")
    assert "convergence_unit" in header and "throughput_per_s" in header
    assert "throughput_samples_per_s" not in header
    rows = [
        dict(zip(header, line.split(","), strict=True)) for line in result.stdout.splitlines()[1:]
    ]
    assert {r["convergence_unit"] for r in rows} == {"epochs"}
    assert all(r["samples_per_s_per_accelerator"] == "" for r in rows)


@pytest.mark.parametrize(
    ("workload", "round_name", "unit"),
    [
        ("unet3d", "v3.0", "epochs"),  # RCPs of 3.0.0: ~2,000 epochs
        ("unet3d", "v3.1", "samples"),  # from 3.1.0: ~400,000 samples
        ("stable_diffusion", "v3.1", "steps"),  # 3.1.0 reads step_num
        ("stable_diffusion", "v4.0", "samples"),
        ("bert", "v0.7", "samples"),
        ("retinanet", "v5.0", "epochs"),
        ("dlrmv4", "v6.1", "samples"),
        ("gpt_oss_20b", "v6.0", "samples"),
    ],
)
def test_the_unit_is_the_rulesets(workload: str, round_name: str, unit: str) -> None:
    assert str(convergence_unit(workload, round_name)) == unit


def test_the_rule_on_numbers() -> None:
    refs = (2.5e6, 5.5e6, "2.0.0")
    assert samples_to_converge_flag(2.6e6, "samples", refs, []) == ""
    assert samples_to_converge_flag(2.6e5, "samples", refs, []) == ""  # 10x: the edge
    assert "outside" in samples_to_converge_flag(2.4e5, "samples", refs, [])
    assert "outside" in samples_to_converge_flag(6e7, "samples", refs, [])
    assert "not a positive number" in samples_to_converge_flag(0.0, "samples", refs, [])
    assert samples_to_converge_flag(40.0, "epochs", None, [3.0]) == ""  # one peer: no test
    assert "median" in samples_to_converge_flag(40.0, "epochs", None, [3.0, 3.5])


def test_one_sample_is_said_in_the_singular() -> None:
    """v1.1's BERT logs 1 where millions of samples were needed: "1 samples is more than
    10x outside" read in every such line; one of a unit is said in the singular."""
    from gpuscale.plausibility import samples_to_converge_flag

    said = samples_to_converge_flag(1.0, "samples", (2.5e6, 3.5e6, "1.1.0"), [])
    assert said.startswith("1 sample is more than"), said
    assert samples_to_converge_flag(2.0, "epochs", (35.0, 86.0, "4.1.0"), []).startswith("2 epochs")
