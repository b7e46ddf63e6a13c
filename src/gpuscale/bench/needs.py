"""What the measuring commands need installed: PyTorch (the ``bench`` extra). Pure Python:
the CLI asks before it imports anything heavy."""

from __future__ import annotations

import importlib.util

CPU_WHEEL = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


def torch_missing(what: str) -> str | None:
    """Why ``what`` (``the benchmark``) cannot run here and what to install, where PyTorch
    is not importable; None where it is."""
    try:
        found = importlib.util.find_spec("torch") is not None
    except (ImportError, ValueError):
        found = False
    if found:
        return None
    return f"{what} needs PyTorch: pip install 'gpuscale[bench]' (without a GPU, first {CPU_WHEEL})"
