"""E' above 1 is marked with its reason in one place and shown everywhere: the scaling
table (analyze, its CSV), trends, the report's tooltips and findings."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpuscale import load_round
from gpuscale.analysis import scaling_table
from gpuscale.analysis.superlinear import REASONS, TOLERANCE

runner = CliRunner()


@pytest.fixture(scope="module")
def v30() -> pd.DataFrame:
    return load_round("v3.0").scores


def test_every_e_prime_above_one_has_a_reason_and_no_other(v30, v41) -> None:
    for scores, workload, rule in ((v30, "retinanet", "family"), (v41.scores, "bert", "study")):
        table = scaling_table(scores, workload, reference=rule)
        above = table["normalized_efficiency"] > 1 + TOLERANCE
        assert above.any()
        assert (table.loc[above, "superlinear"].isin(REASONS)).all()
        assert (table.loc[~above, "superlinear"] == "").all()


def test_the_issues_cases_get_their_reasons(v30, v41, v50) -> None:
    # v3.0 ssd: 8 A100-SXM4 against 4 reach E' 1.39 under the family rule
    family = scaling_table(v30, "retinanet", reference="family")
    a100 = family[(family["accelerator_family"] == "A100-SXM4-80GB")]
    eight = a100[a100["accelerators"] == 8].iloc[0]
    assert eight["normalized_efficiency"] == pytest.approx(1.39, abs=0.01)
    assert eight["superlinear"] == "above peers too"  # no faster A100-SXM4 at 4
    # same-count peers in v5.0 SD: E' 1.20 is a faster system at the reference's count
    sd = scaling_table(v50.scores, "stable_diffusion", reference="family")
    peers = sd[(sd["accelerator_family"] == "H200-SXM5-141GB") & (sd["accelerators"] == 8)]
    assert peers["normalized_efficiency"].max() == pytest.approx(1.20, abs=0.01)
    assert set(peers.loc[peers["normalized_efficiency"] > 1.01, "superlinear"]) == {
        "faster at N_ref"
    }
    # v4.1 BERT, study reference 2 x RTX A5000: the B200's E' 24 is another family
    bert = scaling_table(v41.scores, "bert", reference="study")
    b200 = bert[bert["accelerator_family"] == "B200"].iloc[0]
    assert b200["normalized_efficiency"] > 20 and b200["superlinear"] == "other family"
    # a faster peer at the reference's count explains a slow reference
    slow = family[family["superlinear"] == "slow reference"].iloc[0]
    same = family[
        (family["accelerator_family"] == slow["accelerator_family"])
        & (family["accelerators"] == slow["reference_accelerators"])
    ]
    assert same["time_to_train_min"].min() < slow["reference_time_to_train_min"]


def test_analyze_and_trends_show_the_mark() -> None:
    csv = runner.invoke(
        app_(), ["analyze", "--round", "v3.0", "-b", "retinanet", "-r", "family", "-f", "csv"]
    )
    assert csv.exit_code == 0, csv.output
    frame = pd.read_csv(io.StringIO(csv.stdout), keep_default_na=False)
    assert "above peers too" in set(frame["superlinear"])
    trends = runner.invoke(app_(), ["trends", "-b", "retinanet", "-f", "csv"])
    rows = pd.read_csv(io.StringIO(trends.stdout), keep_default_na=False)
    a100 = rows[(rows["round"] == "v3.0") & (rows["accelerator_family"] == "A100-SXM4-80GB")]
    assert a100["note"].str.contains("above 1: above peers too").all()


def test_tooltips_and_findings_say_why(v41) -> None:
    from gpuscale.analysis import AnalysisOptions, analyze
    from gpuscale.report.figures_common import point_labels
    from gpuscale.report.findings import workload_findings

    result = analyze(v41, ["bert"], AnalysisOptions(n_boot=100))[0]
    labels = point_labels(result.table)
    marked = result.table["superlinear"] != ""
    for label, code in zip(labels, result.table["superlinear"], strict=True):
        assert ("E' above 1: " + REASONS[code] in label) if code else ("E' above 1" not in label)
    text = " ".join(workload_findings(result, "study"))
    assert f"E' above 1 for {int(marked.sum())} of {len(result.table)} systems" in text


def app_():
    from gpuscale.cli import app

    return app


def test_fewer_devices_than_an_explicit_reference_says_so() -> None:
    """Against a 64-device reference, a 16-device system of the same family taking 3x the
    time has E' = (1/3) / (16/64) = 1.33: sub-linear scaling from 16 to 64 seen from
    below, not a super-linear value, and the column says so (it was left empty, while
    the column is defined as why E' is above 1)."""
    from .tables import scores as scores_of

    scores = scores_of(
        [
            ("big", "H100-SXM5-80GB", 64, 10.0),
            ("small", "H100-SXM5-80GB", 16, 30.0),
            ("tiny", "H100-SXM5-80GB", 16, 39.95),
        ]
    )
    table = scaling_table(scores, "bert", reference="Org/big").set_index("system_id")
    assert table.loc["small", "normalized_efficiency"] == pytest.approx(4 / 3)
    assert table.loc["small", "superlinear"] == "below N_ref"
    assert 1 < table.loc["tiny", "normalized_efficiency"] < 1 + TOLERANCE
    assert table.loc["tiny", "superlinear"] == "below N_ref"


def test_every_e_prime_above_one_says_why_against_a_large_named_reference(v41) -> None:
    """v4.1 BERT against NVIDIA's Eos at 64 H100 (the user walk): XE8640x4H100 at E' 1.41,
    the H100 systems at 8 at 1.25-1.33 and 1-Click-Cluster_n2 at 1.09 all had an empty
    reason. Every E' above 1 has one now, in the words of ``REASONS``."""
    table = scaling_table(v41.scores, "bert", reference="NVIDIA/eos_n8_ngc23.04_pytorch").set_index(
        "system_id"
    )
    above = table["normalized_efficiency"] > 1
    assert above.sum() >= 15
    assert table.loc[above, "superlinear"].isin(REASONS).all()
    assert (table.loc[~above, "superlinear"] == "").all()
    assert table.loc["XE8640x4H100-SXM-80GB", "normalized_efficiency"] == pytest.approx(
        1.41, abs=0.01
    )
    assert table.loc["XE8640x4H100-SXM-80GB", "superlinear"] == "below N_ref"


def test_e_prime_a_hair_above_one_says_why() -> None:
    """More devices than the reference (the fastest at 8), 0.3% above 1: within the
    run-to-run spread, not a case to check (it had no reason); 8% above 1 is."""
    from .tables import scores as scores_of

    scores = scores_of(
        [
            ("ref", "H100", 8, 10.0),
            ("peer", "H100", 8, 10.0),
            ("hair", "H100", 16, 10.0 / 2 / 1.003),
            ("far", "H100", 32, 10.0 / 4 / 1.08),
        ]
    )
    table = scaling_table(scores, "bert", reference="study").set_index("system_id")
    assert table.loc["ref", "superlinear"] == ""
    assert table.loc["peer", "superlinear"] == ""
    assert table.loc["hair", "superlinear"] == "within spread"
    assert table.loc["far", "superlinear"] == "above peers too"


def test_every_bundled_e_prime_above_one_says_why(bundled) -> None:
    """Under both rules, every E' above 1 of every bundled workload has a reason (23 within
    0.5% of 1 had none)."""
    missing = []
    for round_name in sorted(bundled.scores["round"].unique()):
        scores = bundled.scores[bundled.scores["round"] == round_name]
        for workload in sorted(scores["workload"].unique()):
            for rule in ("study", "family"):
                table = scaling_table(scores, workload, reference=rule)
                if table.empty:
                    continue
                above = table["normalized_efficiency"] > 1
                empty = above & ~table["superlinear"].isin(REASONS)
                missing += [(round_name, workload, rule, s) for s in table.loc[empty, "system_id"]]
    assert missing == []
