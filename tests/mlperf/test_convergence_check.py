"""Samples to converge that cannot be true are flagged where the scores are made, with
their reason, and kept out of the analysis built on them; the unit travels with the
number (samples, epochs or steps, as the round's ruleset counts them). The reasons' words
are the golden view ``mlperf/samples_to_converge_flags``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.cli import app
from gpuscale.mlperf.convergence_check import samples_to_converge_flag
from gpuscale.mlperf.ingest import read_round
from gpuscale.tables import convergence_unit

from .logbuilder import RoundBuilder

pytest.importorskip("mlperf_logging")

VIEW = "mlperf/samples_to_converge_flags"
PER_ACCELERATOR = "samples_per_s_per_accelerator"  # a rate per sample, so none of epochs


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


def test_bert_logging_one_where_others_log_millions_is_flagged(tmp_path: Path, golden) -> None:
    """v2.0 BERT: Baidu and Samsung log samples_to_converge = 1.0, every other
    submitter ~2.5-3M: their value is flagged and in no decomposition."""
    per_org = {"NVIDIA": 2.6e6, "Baidu": 1.0, "Dell": 2.7e6, "Samsung": 1.0}
    tables = read_round(_round("v2.0", "bert", per_org).write_dir(tmp_path))
    flags = _flags(tables)
    assert flags["NVIDIA"] == flags["Dell"] == ""
    assert flags["Baidu"] == flags["Samsung"] != ""
    assert "ruleset 2.0.0" in flags["Baidu"]  # the RCPs it was checked against
    golden.check(VIEW, "v2.0 bert: 1 sample against the RCPs", flags["Baidu"])
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
        assert table.loc[org, PER_ACCELERATOR] != table.loc[org, PER_ACCELERATOR]
        assert table.loc[org, "samples_to_converge"] == 1.0  # the value stays, flagged


def test_v07_bert_units_mixed_across_submitters_are_all_flagged(tmp_path: Path, golden) -> None:
    """v0.7 has no RCPs: BERT is checked against the nearest ruleset's (1.0.0), which
    count the same workload in the same unit (samples); 1 to 11,718 are not samples."""
    per_org = {"A": 1.0, "B": 11718.0, "C": 3.0, "D": 250.0}
    tables = read_round(_round("v0.7", "bert", per_org).write_dir(tmp_path))
    flags = _flags(tables)
    assert all("ruleset 1.0.0" in f for f in flags.values())  # the nearest ruleset's RCPs
    golden.check(VIEW, "v0.7 bert: 11718 samples against ruleset 1.0.0", flags["B"])


def test_without_rcps_a_value_far_from_the_other_submitters_is_flagged(
    tmp_path: Path, golden
) -> None:
    """GNMT (v0.7 only) has no RCPs in any ruleset: the round's other submitters decide."""
    per_org = {"A": 3.0, "B": 4.0, "C": 3.5, "D": 350.0}
    tables = read_round(_round("v0.7", "gnmt", per_org).write_dir(tmp_path))
    flags = _flags(tables)
    assert flags["A"] == flags["B"] == flags["C"] == ""
    assert "3 other" in flags["D"] and "(3.5 epochs)" in flags["D"]  # the peers, their median
    golden.check(VIEW, "v0.7 gnmt: 350 epochs against 3 peers", flags["D"])


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
    assert {"convergence_unit", "throughput_per_s"} <= set(header)
    assert not [c for c in header if c.startswith("throughput_samples")]
    rows = [
        dict(zip(header, line.split(","), strict=True)) for line in result.stdout.splitlines()[1:]
    ]
    assert {r["convergence_unit"] for r in rows} == {"epochs"}
    assert all(r[PER_ACCELERATOR] == "" for r in rows)


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
        ("gpt3", "v3.0", "tokens"),  # rcps_gpt3.json: 1,157,627,904 = 368 x 1,536 x 2,048
        ("gpt3", "v4.1", "tokens"),
        ("llama2_70b_lora", "v4.0", "samples"),  # "samples to converge": 3,072 at batch 8
        ("llama31_405b", "v5.0", "samples"),  # samples_count: 324,576 = 322 x 1,008
        ("llama31_8b", "v5.1", "samples"),
    ],
)
def test_the_unit_is_the_rulesets(workload: str, round_name: str, unit: str) -> None:
    assert str(convergence_unit(workload, round_name)) == unit


def test_the_rule_on_numbers(golden) -> None:
    """Within 10x of the RCPs' range (its edge included), or of the median of two peers or
    more, a value is plausible; beyond, or not positive, it is flagged, each reason its
    own golden case."""
    refs = (2.5e6, 5.5e6, "2.0.0")
    assert samples_to_converge_flag(2.6e6, "samples", refs, []) == ""
    assert samples_to_converge_flag(2.6e5, "samples", refs, []) == ""  # 10x: the edge
    assert samples_to_converge_flag(40.0, "epochs", None, [3.0]) == ""  # one peer: no test
    flagged = {
        "below the RCPs": samples_to_converge_flag(2.4e5, "samples", refs, []),
        "above the RCPs": samples_to_converge_flag(6e7, "samples", refs, []),
        "not positive": samples_to_converge_flag(0.0, "samples", refs, []),
        "far from two peers": samples_to_converge_flag(40.0, "epochs", None, [3.0, 3.5]),
    }
    for case, said in flagged.items():
        assert said != "", case
        golden.check(VIEW, f"the rule: {case}", said)


def test_one_sample_is_said_in_the_singular(golden) -> None:
    """One of a unit is said in the singular (v1.1's BERT logs 1 where millions of samples
    were needed), more in the plural."""
    one = samples_to_converge_flag(1.0, "samples", (2.5e6, 3.5e6, "1.1.0"), [])
    two = samples_to_converge_flag(2.0, "epochs", (35.0, 86.0, "4.1.0"), [])
    assert one.split()[:2] == ["1", "sample"] and two.split()[:2] == ["2", "epochs"]
    golden.check(VIEW, "one sample", one)
