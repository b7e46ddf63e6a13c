"""The command line starts light: ``import gpuscale.cli`` and ``--help`` (of the app and of
the commands) load none of torch, pandas and numpy; each command imports what it needs when it
runs (the lazy imports in ``gpuscale.cli`` say why they wait)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")
HEAVY = ("torch", "pandas", "numpy")

PROBE = """
import json, sys
sys.argv = ["gpuscale", *sys.argv[1:]]
if len(sys.argv) > 1:
    from gpuscale.cli import main
    try:
        main()
    except SystemExit:
        pass
else:
    import gpuscale.cli
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


def heavy_modules_loaded(*argv: str) -> list[str]:
    """The heavy modules in ``sys.modules`` after the import (no ``argv``) or the command."""
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "120"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return json.loads(done.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "argv",
    [
        (),
        ("--help",),
        ("analyze", "--help"),
        ("plan", "--help"),
        ("bench", "--help"),
        ("advise", "--help"),
    ],
    ids=["import", "help", "analyze-help", "plan-help", "bench-help", "advise-help"],
)
def test_the_cli_starts_without_torch_pandas_or_numpy(argv: tuple[str, ...]) -> None:
    assert heavy_modules_loaded(*argv) == []


def test_the_probe_sees_a_command_that_loads_pandas() -> None:
    """The check can fail: a command that reads a round does load pandas."""
    assert "pandas" in heavy_modules_loaded("scores", "--round", "v4.1", "-b", "bert", "-f", "csv")


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (("--models", "mlp-9m"), "error: --models mlp-9m: unknown model (did you mean 'mlp-17m'?)"),
        (("--models", "mlp-0.2m,MLP-0.2M"), "error: --models/--model: mlp-0.2m given twice"),
        (("--model", "foo:"), "error: model 'foo:' is not a model spec: nothing after the colon"),
        (("--model", "no such.py:make"), "error: --model no such.py:make: no file '/"),
        (("--models", "no such.py:make"), "error: --models no such.py:make: no file '/"),
        (("--model", "mlp-9m"), "error: --model mlp-9m: unknown model"),
    ],
)
def test_bench_refuses_a_model_name_before_importing_torch(
    argv: tuple[str, ...], said: str
) -> None:
    """A model name no model has (``bench --models mlp-9m``), one given twice and a spec of
    no form are refused in one line before torch is imported (seconds): the ladder's names
    and shapes need no torch."""
    env = {**os.environ, "PYTHONPATH": SRC, "COLUMNS": "120"}
    probe = PROBE.format(heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", probe, "bench", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    lines = done.stderr.strip().splitlines()
    assert "torch" not in json.loads(lines[-1]), lines
    assert len(lines) == 2 and lines[0].startswith(said), lines
    assert "Traceback" not in done.stderr
