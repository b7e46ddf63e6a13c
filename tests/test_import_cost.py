"""What ``import gpuscale.cli`` (every command, ``--help`` included) loads: not torch, not
the slow libraries only some commands need, and not the round reader (``gpuscale.mlperf``,
about 0.3 s). The lazy imports that keep them off say so in a comment
(tests/test_lazy_imports.py); this checks that they still do."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gpuscale.version import __version__

SRC = Path(__file__).resolve().parents[1] / "src"

# Loaded only by the commands that use them (pandas and numpy are loaded at start today:
# the analysis modules the CLI imports hold them at the top).
KEPT_OFF = ("torch", "matplotlib", "sklearn", "kneed", "scipy", "gpuscale.mlperf")


def modules_loaded_by(statement: str) -> set[str]:
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_the_cli_starts_without_the_slow_imports() -> None:
    loaded = modules_loaded_by("import gpuscale.cli")
    assert "gpuscale.cli" in loaded
    assert not [m for m in KEPT_OFF if m in loaded]


def test_the_check_sees_a_slow_import() -> None:
    # the same check on a statement that does load one of them finds it
    loaded = modules_loaded_by("import gpuscale.cli\nimport gpuscale.mlperf.rcp")
    assert [m for m in KEPT_OFF if m in loaded] == ["gpuscale.mlperf"]


def test_version_is_answered_before_the_commands_load() -> None:
    """``gpuscale --version`` (the console script, ``gpuscale.__main__:main``) prints the
    version without importing the command line (~0.3 s); other words still reach it."""
    code = (
        "import sys, json\nsys.argv = ['gpuscale', '--version']\n"
        "from gpuscale.__main__ import main\ntry:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(sys.modules)))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    said, loaded = done.stdout.splitlines()
    assert said == f"gpuscale {__version__}"
    assert not [m for m in json.loads(loaded) if m.startswith("gpuscale.cli")]
    assert "gpuscale.cli" in modules_loaded_by(code.replace("'--version'", "'--help'"))
