"""A refusal for one model of a bench file names that model's runs and what would mend
them, never another model's: a file of two models, ``mlp-a`` flagged for a busy host and
``mlp-b`` for no warm-up, refused ``--model mlp-a`` with mlp-b's four runs and its
"run --warmup 1 or more" (no warm-up's remedy) among the reasons."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import gpuscale
from gpuscale.advice.calibrate.errors import CalibrationError
from gpuscale.bench.results_file import append_result
from gpuscale.plausibility import NO_WARMUP, FlagKind

from ..builders import bench_record
from ..golden import Golden

BUSY = f"{FlagKind.BUSY}: other processes used 60% of its CPU time during the timed steps"
LEFT_OUT = re.compile(r"(\d+) runs? (?:was|were) left out as flagged")


def _file(tmp_path: Path) -> Path:
    """mlp-a on 1 and 2 devices, both busy; mlp-b on 1, 2 and 4, each without warm-up."""
    path = tmp_path / "results.jsonl"
    for n in (1, 2):
        append_result(path, bench_record("mlp-a", 10**6, n, 1000.0 * n, flags=[BUSY]))
    for n in (1, 2, 4):
        append_result(path, bench_record("mlp-b", 2 * 10**6, n, 800.0 * n, flags=[NO_WARMUP]))
    return path


def test_a_models_refusal_names_its_own_flagged_runs_only(tmp_path: Path, golden: Golden) -> None:
    path = _file(tmp_path)
    with pytest.raises(CalibrationError) as refused:
        gpuscale.advise(bench=str(path), model="mlp-a")
    text = str(refused.value)
    left = LEFT_OUT.search(text)
    assert left and int(left.group(1)) == 2, text  # mlp-a's two runs, not the file's five
    assert str(FlagKind.BUSY) in text
    assert str(FlagKind.NO_WARMUP) not in text and "mlp-b" not in text, text
    golden.check("advice/refusals", "a model's refusal names its own flagged runs", text)


def test_the_files_refusal_still_names_every_model(tmp_path: Path) -> None:
    """No model asked: the refusal is the file's, every flagged run in it."""
    with pytest.raises(CalibrationError) as refused:
        gpuscale.advise(bench=str(_file(tmp_path)))
    text = str(refused.value)
    left = LEFT_OUT.search(text)
    assert left and int(left.group(1)) == 5, text
    assert str(FlagKind.BUSY) in text and str(FlagKind.NO_WARMUP) in text
