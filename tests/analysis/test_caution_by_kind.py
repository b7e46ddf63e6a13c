"""Cautions go by kind, not by family: a pick whose E' above 1 is not scaling (above its
family's peers at the reference's count too) carries its caution as a pick across
families does (v2.1 MiniGo's speed x efficiency pick had none)."""

from __future__ import annotations

import pytest

from gpuscale.analysis import analyze
from gpuscale.analysis.answers import answers as answer_table
from gpuscale.mlperf.ingest import read_round

from ..mlperf.logbuilder import RoundBuilder

pytest.importorskip("mlperf_logging")

# one family: a slow reference at 8, a faster peer at 8, 16 and 32 accelerators
SYSTEMS = {"slow8": (1, 100.0), "fast8": (1, 60.0), "box16": (2, 25.0), "box32": (4, 20.0)}


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory):
    rb = RoundBuilder()
    for name, (nodes, minutes) in SYSTEMS.items():
        rb.system("Acme", name, nodes=str(nodes))
        rb.runs("Acme", name, "bert", [minutes * (1 + 0.002 * i) for i in range(10)])
    tables = read_round(rb.write_dir(tmp_path_factory.mktemp("peers")))
    (found,) = analyze(tables, ["bert"])
    return found


def test_the_superlinear_pick_carries_its_caution(result) -> None:
    table = result.table.set_index("system_id")
    assert table.loc["box16", "superlinear"] == "above peers too"
    answers = answer_table(result)
    speed = answers[answers["criterion"] == "speed x efficiency"]
    assert set(speed["accelerators"].astype(int)) == {16}  # the pick, in both scopes
    assert (speed["note"].str.contains("above peers too", regex=False)).all(), speed["note"]


def test_a_like_with_like_pick_within_noise_has_none(result) -> None:
    answers = answer_table(result)
    fastest = answers[answers["criterion"] == "fastest"]
    assert (fastest["note"].fillna("") == "").all()


def test_a_threshold_pick_that_is_the_reference_itself_says_so() -> None:
    """v4.1 GPT-3 over all systems: the E' threshold picks 64 x B200, the reference itself
    (E' 1), every larger system another family (H100s, TPUs) under the floor as other
    hardware; its caution was empty. Within a family (the reference rule ``family``) no
    such caution: a larger system of its own family exists or none other does."""
    from gpuscale import load_round
    from gpuscale.analysis import AnalysisOptions

    (gpt3,) = analyze(load_round("v4.1"), ["gpt3"], AnalysisOptions(n_boot=100))
    pick = gpt3.equilibrium.efficiency_threshold
    assert (pick.accelerator_family, pick.accelerators) == ("B200", 64)
    assert pick.caution.startswith("it is the reference itself (E' 1 by definition)")
    for family in ("H100-SXM5-80GB", "TPU-Trillium", "TPU-v5p"):
        assert family in pick.caution
    (own,) = analyze(load_round("v4.1"), ["gpt3"], AnalysisOptions(reference="family", n_boot=100))
    for scope in own.by_family:
        if scope.efficiency_threshold is not None:
            assert not scope.efficiency_threshold.caution.startswith("it is the reference itself")
