"""``analyze -f csv`` carries what ``-f json``'s ``equilibrium_by_family`` says of each row:
for the bundled round (every workload, both reference rules), each family's ``reference``
is, as written, the ``family_reference`` of every CSV row of that family; each pick's E'
is the picked row's ``family_normalized_efficiency``, and its criterion is among the
row's ``family_picks``; a row of a family with no picks of its own has the three empty."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import analyze
from gpuscale.analysis.document import FAMILY_COLUMNS, as_json
from gpuscale.analysis.terminal import every_result_view
from gpuscale.mlperf import load_round
from gpuscale.tables.views import jsonable

CRITERIA = ("knee", "max_speed_x_efficiency", "efficiency_threshold")


@pytest.fixture(scope="module")
def tables():
    return load_round("v4.1")


@pytest.mark.parametrize("rule", ["study", "family"])
def test_each_family_reference_and_pick_is_in_the_csv(tables, rule: str) -> None:
    options = AnalysisOptions(reference=rule, n_boot=100)
    results = analyze(tables, [], options)
    # what the CLI prints: JSON as text (15 significant digits), the CSV as text
    documents = json.loads(json.dumps(jsonable(as_json(results, options, tables.scores))))
    text = every_result_view(results).frame.to_csv(index=False)
    csv = pd.read_csv(io.StringIO(text), keep_default_na=False, dtype=str)
    assert list(csv.columns[-3:]) == list(FAMILY_COLUMNS)
    families = 0
    for document in documents:
        rows = csv[(csv["round"] == document["round"]) & (csv["workload"] == document["benchmark"])]
        assert len(rows) == len(document["systems"]) > 0
        scopes = {eq["scope"] for eq in document["equilibrium_by_family"]}
        for eq in document["equilibrium_by_family"]:
            families += 1
            mine = rows[rows["accelerator_family"] == eq["scope"]]
            if eq["reference"] is None:  # one accelerator count: no E', no pick, no column
                assert not any(eq[c] for c in CRITERIA), eq["scope"]
                assert set(mine[list(FAMILY_COLUMNS)].to_numpy().ravel()) == {""}
                continue
            assert set(mine["family_reference"]) == {eq["reference"]}
            for criterion in CRITERIA:
                pick = eq[criterion]
                if pick is None:
                    continue
                (row,) = mine[
                    (mine["org"] == pick["org"])
                    & (mine["system_id"] == pick["system_id"])
                    & (mine["accelerators"].astype(int) == pick["accelerators"])
                ].itertuples()
                assert float(row.family_normalized_efficiency) == pytest.approx(
                    pick["normalized_efficiency"], rel=1e-12
                )
                assert pick["criterion"] in row.family_picks.split("; ")
            # every criterion the CSV names on a row is a pick of the JSON
            named = [(p, r.org, r.system_id) for r in mine.itertuples() for p in _split(r)]
            picks = {
                (eq[c]["criterion"], eq[c]["org"], eq[c]["system_id"])
                for c in CRITERIA
                if eq[c] is not None
            }
            assert set(named) == picks and len(named) == len(picks)
        others = rows[~rows["accelerator_family"].isin(scopes)]
        assert (others[list(FAMILY_COLUMNS)] == "").all().all()
    assert families >= 10


def _split(row) -> list[str]:
    return [p for p in row.family_picks.split("; ") if p]
