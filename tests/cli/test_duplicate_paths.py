"""A round given twice (or one organisation in two archives) reaches analyze,
report and dataset once: no duplicate keys, no `non-unique multi-index` crash."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

from ..mlperf.test_hostile import base

runner = CliRunner()


@pytest.mark.slow
def test_dataset_and_analyze_of_a_round_given_twice(tmp_path) -> None:
    rb = base()
    rb.system("Other", "o16", per_node="16").runs(
        "Other", "o16", "bert", [6, 7, 6, 7, 6, 7, 6, 7, 6, 7]
    )
    first, second = rb.write_tar(tmp_path, "gz"), rb.write_zip(tmp_path)
    out = tmp_path / "ds"
    result = runner.invoke(app, ["dataset", str(first), str(second), "--out", str(out)])
    assert result.exit_code == 0, result.output
    results = pd.read_parquet(out / "results.parquet")
    assert len(results) == 2
    assert not results.duplicated(["round", "org", "system_id", "benchmark"]).any()
    result = runner.invoke(app, ["analyze", str(first), str(first), "-f", "json"])
    assert result.exit_code == 0, result.output
    assert "non-unique" not in result.output
