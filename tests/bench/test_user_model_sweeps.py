"""Models of the user's through the whole CLI sweep (gloo, on CPU): two models of one spec
kept apart by ``--resume``, and a model whose loss is NaN flagged on every row, each row
read back (user walks)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("torch")

from typer.testing import CliRunner

from gpuscale.bench.results import bench_table, read_results
from gpuscale.cli import app

pytestmark = pytest.mark.slow


MODEL = """
import torch


def make():
    module = torch.nn.Linear({width}, 2)

    def make_batch(size, device):
        targets = torch.randint(0, 2, (size,), device=device)
        return torch.randn(size, {width}, device=device), targets

    return module, make_batch
"""


def test_resume_tells_two_models_of_one_spec_apart(tmp_path: Path, monkeypatch) -> None:
    """`bench --models tiny.py:make --resume` in another folder, into the same file,
    measures a 265k-parameter model though a 676-parameter one of the same spec was
    measured (the key names the model's size, not the spec alone)."""
    out = tmp_path / "results.jsonl"
    args = ["bench", "--backend", "gloo", "--nproc", "1", "--models", "tiny.py:make"]
    args += ["--steps", "2", "--warmup", "1", "--out", str(out), "--resume"]
    said = {}
    for folder, width in (("small", 3), ("large", 1000), ("small", 3)):
        (tmp_path / folder).mkdir(exist_ok=True)
        (tmp_path / folder / "tiny.py").write_text(MODEL.format(width=width))
        monkeypatch.chdir(tmp_path / folder)
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        said[folder, len(said)] = " ".join(result.output.split())
    records, _ = read_results(out)
    params = [r["config"]["params"] for r in records]
    assert params[:2] == [8, 2002], params  # the large one measured, not skipped as the small
    assert "1 measured" in said["large", 1], said
    # the small one again: skipped, unless its run was flagged (measured again by design,
    # as a busy machine's few steps may be)
    first_flagged = bool(bench_table(records[:1])["flagged"].iloc[0])
    assert params[2:] == ([8] if first_flagged else []), params
    assert ("1 skipped" in said["small", 2]) == (not first_flagged), said


NAN_MODEL = """
import torch


def make():
    def make_batch(size, device):
        return torch.randn(size, 4, device=device), torch.zeros(size, 2, device=device)

    def loss(output, targets):
        return (output - targets).pow(2).mean() * float("nan")

    return torch.nn.Linear(4, 2), make_batch, loss
"""


def test_a_model_whose_loss_is_nan_is_flagged_and_left_out_of_advice(
    tmp_path: Path, monkeypatch
) -> None:
    """A model whose loss is always NaN is flagged, never `ok` unflagged, and
    `advise --bench` does not advise on it."""
    (tmp_path / "nan_model.py").write_text(NAN_MODEL)
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "r.jsonl"
    args = ["bench", "--backend", "gloo", "--nproc", "1,2", "--models", "nan_model.py:make"]
    result = CliRunner().invoke(app, [*args, "--steps", "2", "--warmup", "1", "--out", str(out)])
    # every row readable (NaN gradient norms were written as NaN, no JSON number, and the
    # N = 2 row was skipped by its own reader "as written before this sweep")
    records, skipped = read_results(out)
    assert skipped == [] and "unreadable" not in result.output, result.output
    assert [r["status"] for r in records] == ["ok", "ok"], result.output
    for record in records:
        assert record["loss_last"] is None and record["noise"]["global_sq"] == []
        assert any(f.startswith("loss not finite: nan") for f in record["flags"])
    advised = CliRunner().invoke(app, ["advise", "--bench", str(out)])
    assert advised.exit_code == 2 and "flag" in advised.output, advised.output
