"""GPT-3's convergence is counted in tokens: its RCP file keys its points "Epochs to
converge", but each is a whole number of steps of the reference's global batch of
2,048-token sequences (1,157,627,904 = 368 x 1,536 x 2,048). Every output that names the
unit says tokens for it; a samples workload still says samples, an epochs one epochs."""

from __future__ import annotations

import csv
import io
import json

import pytest
from typer.testing import CliRunner

from gpuscale.analysis.critical_batch import round_rcp_runs
from gpuscale.analysis.energy_per_result import energy_view
from gpuscale.cli import app
from gpuscale.mlperf import load_round
from gpuscale.tables import Unit, convergence_unit

runner = CliRunner()
SEQUENCE = 2048  # GPT-3's max_sequence_length (compliance_checker closed_gpt3.yaml)


@pytest.mark.parametrize("round_name", ["v3.0", "v3.1", "v4.0", "v4.1"])
def test_gpt3_rcps_are_whole_steps_of_tokens(round_name: str) -> None:
    """Every reference run of every batch is a whole number of steps of ``BS`` sequences
    of 2,048 tokens (an epoch count would be no such multiple)."""
    runs = round_rcp_runs(round_name, "gpt3")
    assert runs  # the ruleset has GPT-3's points: the test can fail
    for batch, values in runs:
        assert values and all(v % (batch * SEQUENCE) == 0 for v in values), (batch, values)
    assert convergence_unit("gpt3", round_name) is Unit.TOKENS


@pytest.mark.parametrize(
    ("workload", "unit"),
    [("gpt3", "tokens"), ("bert", "samples"), ("retinanet", "epochs")],
)
def test_scores_say_the_unit(workload: str, unit: str) -> None:
    """``scores -f csv`` and ``-f json`` give each v4.1 row the unit its RCPs count."""
    args = ["scores", "--round", "v4.1", "-b", workload]
    as_csv = runner.invoke(app, [*args, "-f", "csv"])
    assert as_csv.exit_code == 0, as_csv.output
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert rows and {r["convergence_unit"] for r in rows} == {unit}
    as_json = runner.invoke(app, [*args, "-f", "json"])
    assert as_json.exit_code == 0, as_json.output
    records = json.loads(as_json.stdout)
    assert len(records) == len(rows)
    assert {r["convergence_unit"] for r in records} == {unit}


def test_gpt3_counts_are_billions_of_tokens() -> None:
    """The bundled GPT-3 rows are tokens: about 1.2e9 where the samples would be ~6e5."""
    scores = load_round("v4.1").scores
    gpt3 = scores[scores["workload"] == "gpt3"]
    assert set(gpt3["convergence_unit"]) == {"tokens"}
    assert gpt3["samples_to_converge"].between(1e9, 2e9).all()


def test_energy_says_tokens_not_epochs() -> None:
    """No energy per sample for GPT-3, and the note says its rules count tokens."""
    view = energy_view(load_round("v4.0"), ["gpt3", "llama2_70b_lora"])
    [note] = [n for n in view.notes if n.startswith("GPT-3 175B (v4.0)")]
    assert "count its convergence in tokens, not samples" in note
    frame = view.frame
    assert frame[frame["workload"] == "gpt3"]["energy_per_sample_j"].isna().all()
    assert frame[frame["workload"] == "llama2_70b_lora"]["energy_per_sample_j"].notna().all()
