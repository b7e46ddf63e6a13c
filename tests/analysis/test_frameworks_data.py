"""The framework names ``analysis.software`` tells apart are data (``data/frameworks.csv``):
each row's pattern, its example field as a submitter wrote it, and the rounds whose
systems' ``framework`` fields it matches, checked against the bundled systems table."""

from __future__ import annotations

import csv
import re
from importlib import resources

import pandas as pd
import pytest

from gpuscale.analysis.software import FRAMEWORKS_FILE, framework_names, framework_patterns

ROWS = list(
    csv.DictReader(
        (resources.files("gpuscale") / "data" / FRAMEWORKS_FILE)
        .read_text(encoding="utf-8")
        .splitlines()
    )
)
BUNDLED = ("v3.0", "v3.1", "v4.0", "v4.1", "v5.0")


def test_the_rows_as_stored() -> None:
    stored = [(r["name"], r["pattern"], r["example_round"], r["rounds"]) for r in ROWS]
    assert stored == [
        ("TensorFlow", "tensorflow", "v0.7", "v0.7;v1.1;v3.0;v3.1"),
        ("TensorFlow", "tenorflow", "v0.7", "v0.7"),
        ("TensorFlow", r"\btf\d", "v0.7", "v0.7;v1.1;v3.0"),
        ("TensorFlow", r"\btf\b", "v0.7", "v0.7;v1.1"),
        ("PyTorch", "pytorch", "v0.7", "v0.7;v1.1;v3.0;v3.1;v4.0;v4.1;v5.0"),
        ("PyTorch", r"\btorch\b", "", ""),
        ("MXNet", "mxnet", "v0.7", "v0.7;v1.1;v3.0;v3.1;v4.0;v4.1;v5.0"),
        ("JAX", r"\bjax\b", "v0.7", "v0.7;v1.1"),
        ("JAX", "maxtext", "v4.0", "v4.0;v4.1"),
        ("JAX", "maxdiffusion", "v4.1", "v4.1;v5.0"),
        ("MindSpore", "mindspore", "v0.7", "v0.7"),
        ("PaddlePaddle", "paddle", "v1.1", "v1.1"),
        ("HugeCTR", "hugectr", "v0.7", "v0.7;v1.1;v3.0;v3.1;v4.0;v4.1;v5.0"),
        ("NeMo", "nemo", "v3.0", "v3.0;v3.1;v4.0;v4.1;v5.0"),
        ("DGL", r"\bdgl\b", "v4.0", "v4.0;v4.1;v5.0"),
        ("tinygrad", "tinygrad", "v4.0", "v4.0;v4.1;v5.0"),
    ]
    names = [name for name, _ in framework_patterns()]
    assert names == list(dict.fromkeys(r["name"] for r in ROWS))
    assert len(names) == 10
    tensorflow = dict(framework_patterns())["TensorFlow"].pattern
    assert tensorflow == r"tensorflow|tenorflow|\btf\d|\btf\b"


@pytest.mark.parametrize("row", [r for r in ROWS if r["example"]], ids=lambda r: r["pattern"])
def test_each_example_field_names_its_framework(row: dict[str, str]) -> None:
    assert re.search(row["pattern"], row["example"].lower())
    assert row["name"] in framework_names(row["example"])
    assert row["example_round"] in row["rounds"].split(";")
    assert row["example_submitter"]


def test_the_bundled_rounds_each_row_names_are_those_whose_fields_it_matches() -> None:
    systems = pd.read_parquet(resources.files("gpuscale") / "data" / "systems.parquet")
    fields = systems[["round", "framework"]].dropna()
    for row in ROWS:
        matched = fields.loc[
            fields["framework"].str.lower().str.contains(row["pattern"], regex=True), "round"
        ]
        listed = {r for r in row["rounds"].split(";") if r in BUNDLED}
        assert set(matched) == listed, row["pattern"]
