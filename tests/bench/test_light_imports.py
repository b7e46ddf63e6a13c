"""The requests and configurations the CLI imports at start load neither pandas nor torch
(``gpuscale --help`` stays fast; the planning package once pulled pandas in through
``planning/__init__``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

START = [
    "gpuscale.bench.config",
    "gpuscale.bench.collectives_config",
    "gpuscale.advice.request",
    "gpuscale.planning.request",
]


@pytest.mark.parametrize("module", START)
def test_a_module_the_cli_imports_at_start_is_light(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "print(sorted(m for m in ('pandas', 'numpy', 'torch') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_planning_package_still_gives_plan_on_first_use() -> None:
    from gpuscale import planning
    from gpuscale.planning.api import plan

    assert planning.plan is plan
    with pytest.raises(AttributeError):
        planning.no_such_name  # noqa: B018
