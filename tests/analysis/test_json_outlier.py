"""`analyze -f json` carries each system's `outlier` as the text and CSV do: v4.0
Llama2 70B LoRA's JuniperNetworks H100 systems (3.92x the median of the family's other
submitters at 8) are outliers, left out of the H100 family's reference, and the JSON
says which and why."""

from __future__ import annotations

import json

from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import analyze
from gpuscale.analysis.document import as_json
from gpuscale.mlperf import load_round
from gpuscale.tables.views import jsonable


def test_json_systems_carry_the_outlier_column():
    tables = load_round("v4.0")
    options = AnalysisOptions(reference="family", n_boot=100)
    (result,) = analyze(tables, ["llama2_70b_lora"], options)
    (document,) = json.loads(json.dumps(jsonable(as_json([result], options))))
    by_id = {(s["submitter"], s["system_id"]): s for s in document["systems"]}
    table = result.table.set_index(["submitter", "system_id"])["outlier"].fillna("")
    assert set(by_id) == set(table.index)
    for key, reason in table.items():
        assert by_id[key]["outlier"] == reason
    flagged = {key for key, s in by_id.items() if s["outlier"]}
    assert flagged == {
        ("JuniperNetworks", "h100_n1_ngc24.1_pytorch_deepspeed"),
        ("JuniperNetworks", "h100_n4_ngc24.1_pytorch_deepspeed"),
    }
    # an outlier sets no family reference
    h100 = document["reference"]["by_family"]["H100-SXM5-80GB"]
    assert (h100["submitter"], h100["system_id"]) not in flagged
