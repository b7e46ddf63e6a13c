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


def test_fewer_devices_than_an_explicit_reference_is_not_super_linear() -> None:
    """Against a 64-device reference, a 16-device system of the same family taking 3x the
    time has E' = (1/3) / (16/64) = 1.33: sub-linear scaling from 16 to 64 seen from
    below, not a super-linear value."""
    from .tables import scores as scores_of

    scores = scores_of(
        [
            ("big", "H100-SXM5-80GB", 64, 10.0),
            ("small", "H100-SXM5-80GB", 16, 30.0),
        ]
    )
    table = scaling_table(scores, "bert", reference="Org/big").set_index("system_id")
    assert table.loc["small", "normalized_efficiency"] == pytest.approx(4 / 3)
    assert table.loc["small", "superlinear"] == ""
