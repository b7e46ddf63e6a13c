"""The package runs on every Python its ``requires-python`` admits (3.10 and later): no
module imports a name the oldest of them lacks. The names are those of the standard
library that Python 3.11 added and this kind of code reaches for; the test reads the
source (no 3.10 interpreter needed), so it fails where such an import is written."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "gpuscale"

# (module, name) pairs first in Python 3.11; a module alone: the whole module is new.
NEWER_THAN_310 = {
    ("enum", "StrEnum"),
    ("enum", "verify"),
    ("enum", "member"),
    ("enum", "nonmember"),
    ("typing", "Self"),
    ("typing", "Never"),
    ("typing", "LiteralString"),
    ("typing", "assert_never"),
    ("typing", "reveal_type"),
    ("typing", "Required"),
    ("typing", "NotRequired"),
    ("typing", "TypeVarTuple"),
    ("typing", "Unpack"),
    ("typing", "dataclass_transform"),
    ("datetime", "UTC"),
    ("asyncio", "TaskGroup"),
    ("asyncio", "timeout"),
    ("contextlib", "chdir"),
    ("hashlib", "file_digest"),
    ("operator", "call"),
    ("math", "cbrt"),
    ("math", "exp2"),
    ("tomllib", None),
    ("wsgiref.types", None),
}
NEWER_MODULES = {module for module, name in NEWER_THAN_310 if name is None}


def newer_imports(path: Path) -> list[str]:
    """``module.name`` of each 3.11-only import or attribute in ``path``."""
    tree = ast.parse(path.read_text())
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module in NEWER_MODULES:
                found.append(node.module)
            found += [
                f"{node.module}.{alias.name}"
                for alias in node.names
                if (node.module, alias.name) in NEWER_THAN_310
            ]
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name in NEWER_MODULES]
        elif (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and (node.value.id, node.attr) in NEWER_THAN_310
        ):
            found.append(f"{node.value.id}.{node.attr}")
    return found


def test_the_oldest_python_is_310() -> None:
    """The names above are those 3.10 lacks: the test is about the floor pyproject says."""
    said = re.findall(r'^requires-python = "(.*)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert said == [">=3.10"]


def test_the_scan_finds_a_311_import(tmp_path: Path) -> None:
    """The scan sees each way of writing such an import."""
    module = tmp_path / "m.py"
    module.write_text(
        "import tomllib\nfrom enum import StrEnum\nimport datetime\nwhen = datetime.UTC\n"
    )
    assert newer_imports(module) == ["tomllib", "enum.StrEnum", "datetime.UTC"]


def test_no_module_imports_what_310_lacks() -> None:
    found = {
        str(path.relative_to(SRC)): names
        for path in sorted(SRC.rglob("*.py"))
        if (names := newer_imports(path))
    }
    assert found == {}


def test_the_advice_imports_nothing_310_lacks() -> None:
    """The advice's string enums (``advice.types``) are ``tables.codes.Code``, a ``str``
    and an ``Enum``, not 3.11's ``enum.StrEnum``."""
    found = {p.name: n for p in sorted((SRC / "advice").rglob("*.py")) if (n := newer_imports(p))}
    assert found == {}
