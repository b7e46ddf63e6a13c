"""A model with no trainable parameter is refused before any rank starts, not launched
for every rank to die in DDP ("DistributedDataParallel is not needed when a module
doesn't have any parameter"), exit 1, a row without params."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

MODEL = """
import torch


class OnlyABuffer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.zeros(4))

    def forward(self, x):
        return x + self.b.sum()


def make():
    return OnlyABuffer(), lambda batch, device: (
        torch.randn(batch, 4, device=device),
        torch.zeros(batch, 4, device=device),
    )
"""


def test_a_model_without_parameters_is_refused_as_one_that_cannot_be_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    (tmp_path / "buffers.py").write_text(MODEL)
    monkeypatch.chdir(tmp_path)
    args = ["bench", "--model", "buffers.py:make", "--nproc", "1", "--steps", "3"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2, result.output
    assert "no model could be built: buffers.py:make has no trainable parameter" in result.output


def test_a_model_that_cannot_be_built_is_said_without_repeats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its reason is printed once, not three times (the progress line, an empty results
    table's 'error ... on 1' note, and the final error): no table."""
    pytest.importorskip("torch")
    (tmp_path / "buffers.py").write_text(MODEL)
    monkeypatch.chdir(tmp_path)
    args = ["bench", "--model", "buffers.py:make", "--nproc", "1", "--steps", "3"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "r.jsonl")])
    assert result.exit_code == 2 and result.output.count("has no trainable parameter") == 2
