"""The scripts under ``benchmarks/`` name only what the package has.

They run outside the test suite (they are slow), so a name moved by a refactor (e.g.
``step_error`` from ``advice.api`` to ``advice.from_bench``) would break one silently: each
``from gpuscale... import NAME`` of every script must resolve."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

SCRIPTS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py"))


def _missing(path: Path) -> list[str]:
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not (isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gpuscale")):
            continue
        module = importlib.import_module(node.module)
        for alias in node.names:
            if hasattr(module, alias.name):
                continue
            try:  # a submodule imported by name
                importlib.import_module(f"{node.module}.{alias.name}")
            except ImportError:
                out.append(f"{node.module}.{alias.name}")
    return out


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_every_name_a_benchmark_imports_exists(script: Path) -> None:
    assert _missing(script) == [], f"{script.name} imports names gpuscale does not have"
