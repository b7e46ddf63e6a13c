"""docs/measure.md says how many training FLOPs per parameter per sample each ladder
family does: each figure is checked against the counter the bench uses (it said
"thousands" for the CNNs, which count about 800, as many as the transformers)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuscale.bench.models import BY_NAME
from gpuscale.bench.steps import count_flops

DOC = Path(__file__).resolve().parents[2] / "docs" / "measure.md"
SMALLEST = {"mlp": "mlp-0.2m", "cnn": "cnn-4.7m", "tf": "tf-7m"}


def _said() -> dict[str, float]:
    """Each family's ``about N ... FLOPs per parameter per sample`` in the doc."""
    text = " ".join(DOC.read_text().split())
    found = dict(re.findall(r"`(mlp|cnn|tf)-\*` \([^)]*?about ([\d,]+) (?:training )?FLOPs", text))
    return {family: float(value.replace(",", "")) for family, value in found.items()}


@pytest.mark.parametrize("family", sorted(SMALLEST))
def test_the_flops_per_parameter_the_doc_says_are_counted(family: str) -> None:
    said = _said()
    assert family in said, f"docs/measure.md says no FLOPs per parameter for {family}-*"
    spec = BY_NAME[SMALLEST[family]]
    bench = spec.bench_model()
    batch = spec.make_batch(2, "cpu")
    per_sample, _, _ = count_flops(bench, batch, 2)
    params = sum(p.numel() for p in bench.module.parameters())
    counted = per_sample / params
    # "about": within a fifth of the count (the rungs of a family differ by a few %)
    assert said[family] * 0.8 <= counted <= said[family] * 1.25, (family, counted)
