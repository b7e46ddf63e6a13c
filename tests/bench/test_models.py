"""The model ladder and sizes."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from gpuscale.bench.models import LADDER, parameter_count, parse_size, select_models  # noqa: E402


def test_ladder_spans_the_range_in_two_families() -> None:
    sizes = [parameter_count(s) for s in LADDER]
    assert len(LADDER) >= 7 and {s.family for s in LADDER} == {"mlp", "transformer"}
    assert min(sizes) <= 300_000 and max(sizes) >= 300_000_000


@pytest.mark.parametrize("name", ["mlp-0.2m", "tf-1.5m"])
def test_counts_are_computed_from_the_module(name: str) -> None:
    spec = next(s for s in LADDER if s.name == name)
    model = spec.build()
    assert parameter_count(spec) == sum(p.numel() for p in model.parameters())
    x, y = spec.batch(2, torch.device("cpu"))
    assert model(x).shape[0] == 2 and y.shape[0] == 2


@pytest.mark.parametrize(
    "text, value",
    [("2M", 2_000_000), ("250k", 250_000), ("1.5B", 1_500_000_000), ("7mparams", 7_000_000)],
)
def test_parse_size(text: str, value: int) -> None:
    assert parse_size(text) == value


@pytest.mark.parametrize("text", ["", "lots", "-3M"])
def test_parse_size_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        parse_size(text)


def test_select_models() -> None:
    chosen = select_models(max_params=2_000_000)
    assert [s.name for s, _ in chosen] == ["mlp-0.2m", "mlp-1m", "tf-1.5m"]
    with pytest.raises(ValueError, match="unknown model"):
        select_models(["resnet-9000"])
