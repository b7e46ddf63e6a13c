"""Function-level imports are the exception: each one keeps torch or a slow import (pandas,
matplotlib, scipy, scikit-learn) off a command that does not need it, and says so in a
comment on its line or the line just above its group of imports. An import placed in a
function for no stated reason hides an arrow from readers (the layer contract sees it,
people do not)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "gpuscale"


def unexplained_imports(path: Path) -> list[str]:
    """``path:line`` of each import inside a function with no comment on its line, on a
    line of its contiguous group of imports, or on the line just above the group."""
    lines = path.read_text().splitlines()
    found = []
    for node in ast.walk(ast.parse("\n".join(lines))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for sub in ast.walk(node):
            if not isinstance(sub, (ast.Import, ast.ImportFrom)):
                continue
            first = sub.lineno - 1  # the group's first line (0-based)
            while first > 0 and lines[first - 1].strip().startswith(("import ", "from ")):
                first -= 1
            last = sub.end_lineno or sub.lineno
            group = lines[max(first - 1, 0) : last]
            if not any("#" in line for line in group):
                found.append(f"{path}:{sub.lineno}")
    return found


def test_unexplained_import_is_found(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "def f():\n    import json\n\n\n"
        "def g():\n    # lazy: pandas, not needed for --help\n    import pandas\n    import numpy\n"
    )
    assert unexplained_imports(module) == [f"{module}:2"]


def test_every_function_level_import_says_why() -> None:
    offenders = [hit for path in sorted(PACKAGE.rglob("*.py")) for hit in unexplained_imports(path)]
    assert not offenders, (
        f"{len(offenders)} function-level imports without a reason (move them to the top, or "
        "say on the line above why they wait): " + ", ".join(offenders)
    )
