"""Every number `analyze` prints as text is the number its JSON (and CSV) gives for the
same thing, compared field by field: the answer's picks (count, minutes, interval,
caution), the picks' E' beside the study's within-family E', and the --explain table's
rows beside the JSON's systems and the CSV's rows. `-f json` once gave the B200 picks
of v5.0 RetinaNet E' 1.616 and 0.992 against the H200-NVL reference with no caution,
while the text said 0.64 within B200."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import WorkloadAnalysis, analyze
from gpuscale.analysis.answers import answers
from gpuscale.analysis.document import SUMMARY_FIELDS, as_json
from gpuscale.analysis.study import within_family
from gpuscale.analysis.terminal import (
    INTERVAL,
    answer_view,
    every_result_view,
    interval_text,
    workload_view,
)
from gpuscale.mlperf import load_round
from gpuscale.mlperf.load import read_paths
from gpuscale.tables.views import jsonable

CASES = [
    ("v5.0", "retinanet", "study"),
    ("v5.0", "retinanet", "family"),
    ("v4.1", "bert", "study"),
    ("v4.1", "llama2_70b_lora", "study"),
    ("v3.0", "bert", "study"),
]
CRITERIA = ("knee", "max_speed_x_efficiency", "efficiency_threshold")
MOST = " (most counts)"


def _analysed(tables, workload: str, rule: str) -> tuple[WorkloadAnalysis, AnalysisOptions, dict]:
    options = AnalysisOptions(reference=rule, n_boot=200)
    (result,) = analyze(tables, [workload], options)
    # what `analyze -f json` prints: jsonable values (15 significant digits), as text
    (document,) = json.loads(json.dumps(jsonable(as_json([result], options, tables.scores))))
    return result, options, document


@pytest.fixture(scope="module", params=CASES, ids=["-".join(c) for c in CASES])
def case(request):
    round_name, workload, rule = request.param
    return _analysed(load_round(round_name), workload, rule)


def _equilibrium(document: dict, scope: str) -> dict:
    if scope == "all systems":
        return document["equilibrium"]
    return next(e for e in document["equilibrium_by_family"] if e["scope"] + MOST == scope)


def _picks(eq: dict) -> dict[str, dict]:
    return {p["criterion"]: p for p in (eq[c] for c in CRITERIA) if p is not None}


def _system(document: dict, submitter: str, name: str, accelerators: int) -> dict:
    (found,) = [
        s
        for s in document["systems"]
        if (s["submitter"], s["system_name"], s["accelerators"]) == (submitter, name, accelerators)
    ]
    return found


def test_the_answer_and_its_json_give_the_same_picks(case) -> None:
    """Each row of the answer (the default text) against the JSON's pick of the same
    scope and criterion: count, minutes, interval and caution."""
    result, options, document = case
    shown = answer_view(result, options).frame
    notes = answers(result)
    assert len(shown) == len(notes)
    # the family the answer leads with, named in both
    assert shown["scope"].iloc[0] == document["answer_family"] + MOST
    for row, note in zip(shown.to_dict("records"), notes.to_dict("records"), strict=True):
        if row["criterion"] == "fastest":
            continue
        pick = _picks(_equilibrium(document, row["scope"])).get(row["criterion"])
        if row["accelerators"] == "none":
            assert pick is None, row
            continue
        assert pick is not None, row
        assert row["accelerators"] == pick["accelerators"]
        assert row["minutes"] == pytest.approx(pick["time_to_train_min"], rel=1e-12)
        assert note["note"] == pick["caution"]
        system = _system(document, pick["submitter"], pick["system_name"], pick["accelerators"])
        assert row[INTERVAL] == interval_text(pd.Series(system))


def test_each_family_pick_has_the_e_prime_the_study_says_within_the_family(case) -> None:
    """A family's picks: E' against the family's own reference, the number the study's
    findings print (``within_family``), the reference named; over all systems: E'
    against the table's reference, as the --explain table and the JSON's systems say."""
    result, _, document = case
    for eq in document["equilibrium_by_family"]:
        own = within_family(result.table, eq["scope"])
        if own["accelerators"].nunique() == 1:  # one accelerator count: no E', no pick
            assert eq["reference"] is None and not _picks(eq), eq["scope"]
            continue
        references = own["reference_org"] + "/" + own["reference_system_id"]
        assert {eq["reference"]} == set(references)
        for pick in _picks(eq).values():
            mine = own[(own["org"] == pick["org"]) & (own["system_id"] == pick["system_id"])]
            assert pick["normalized_efficiency"] == pytest.approx(
                float(mine["normalized_efficiency"].iloc[0]), rel=1e-12
            )
    for pick in _picks(document["equilibrium"]).values():
        system = _system(document, pick["submitter"], pick["system_name"], pick["accelerators"])
        assert pick["normalized_efficiency"] == pytest.approx(
            system["normalized_efficiency"], rel=1e-12
        )


def test_the_explain_table_its_json_and_its_csv_hold_the_same_rows(case) -> None:
    """--explain's table (its fields as shown), the JSON's systems and the CSV's rows:
    one row per system, in order, every number alike."""
    result, options, document = case
    shown = workload_view(result, options, decompose=False).frame
    csv = pd.read_csv(io.StringIO(every_result_view([result]).frame.to_csv(index=False)))
    systems = pd.DataFrame(document["systems"])
    assert len(shown) == len(systems) == len(csv)
    for column in SUMMARY_FIELDS:
        for other in (systems[column], csv[column]):
            left, right = shown[column].reset_index(drop=True), other.reset_index(drop=True)
            if pd.api.types.is_numeric_dtype(left) and column != "pareto":
                assert left.astype(float).to_numpy() == pytest.approx(
                    right.astype(float).to_numpy(), rel=1e-12, nan_ok=True
                ), column
            else:
                assert (
                    left.fillna("").astype(str).tolist() == right.fillna("").astype(str).tolist()
                ), column
    intervals = [interval_text(pd.Series(s)) for s in document["systems"]]
    assert shown[INTERVAL].tolist() == intervals


def test_v50_retinanet_b200_picks_carry_the_e_prime_within_b200(v50) -> None:
    """The numbers the user compared: 0.64 within B200 at 64 (the study's text), and
    8 accelerators at E' 1.05 said to be a faster system at the reference's count."""
    _, _, document = _analysed(v50, "retinanet", "study")
    picks = _picks(_equilibrium(document, "B200" + MOST))
    fastest = picks["speed x efficiency"]
    assert (fastest["accelerators"], round(fastest["normalized_efficiency"], 2)) == (64, 0.64)
    assert fastest["caution"] == ""
    kept = picks["E' >= 0.8 x best"]
    assert (kept["accelerators"], round(kept["normalized_efficiency"], 2)) == (8, 1.05)
    assert "faster at N_ref" in kept["caution"]
    assert _equilibrium(document, "B200" + MOST)["reference"] == "Oracle/1xBM.GPU.B200.8"


@pytest.mark.shared
@pytest.mark.slow
def test_v07_bert_a100_pick_carries_the_e_prime_within_a100(shared_archive) -> None:
    """v0.7 BERT: the A100 pick at 256 is E' 0.46 within A100, as the study's text says
    (the JSON gave 1.89, against the V100 reference)."""
    tables = read_paths([shared_archive("v0.7")])
    _, _, document = _analysed(tables, "bert", "study")
    picks = _picks(_equilibrium(document, "A100-SXM4-40GB" + MOST))
    fastest = picks["speed x efficiency"]
    assert (fastest["accelerators"], round(fastest["normalized_efficiency"], 2)) == (256, 0.46)
