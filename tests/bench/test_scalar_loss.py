"""A custom loss that is no scalar fails the run with a row saying so (a user walk: a loss
per sample failed in torch's words, "grad can be implicitly created only for scalar
outputs", which name neither the loss nor what to return)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.bench.results import read_results
from gpuscale.cli import app

torch = pytest.importorskip("torch")

HOSTILE = "tests/bench/hostile_models.py"
SAID = "the model's loss must be a scalar: loss(output, targets) returned"


@pytest.mark.parametrize(
    "loss, got",
    [
        (lambda out, t: (out - 1).pow(2).sum(dim=1), "a tensor of shape (5,)"),
        (lambda out, t: 0.5, "float"),
    ],
)
def test_a_loss_that_is_no_scalar_is_named(loss, got: str) -> None:
    from gpuscale.bench.config import ModelError
    from gpuscale.bench.model_base import BenchModel

    bench = BenchModel(torch.nn.Linear(4, 3), lambda n, d: None, loss)
    with pytest.raises(ModelError) as raised:
        bench.forward_loss(bench.module, (torch.ones(5, 4), None))
    assert str(raised.value) == f"{SAID} {got} (reduce it, e.g. with .mean())"
    one = BenchModel(torch.nn.Linear(4, 3), lambda n, d: None, lambda o, t: o.sum().reshape(1))
    assert one.forward_loss(one.module, (torch.ones(5, 4), None)).shape == (1,)  # backward takes it


def test_the_row_says_the_loss_must_be_a_scalar(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    args = ["bench", "--backend", "gloo", "--nproc", "1", "--steps", "1", "--warmup", "0"]
    args += ["--model", f"{HOSTILE}:vector_loss", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    (row,) = read_results(out)[0]
    assert row["status"] == "error"
    assert row["error"] == (f"rank 0: {SAID} a tensor of shape (8,) (reduce it, e.g. with .mean())")
