"""The fits are computed once per data version: the shipped ones are those of the bundled
data and model, a stale stamp is refitted, and a plan of the bundled rounds loads neither
pandas nor numpy (what keeps ``gpuscale plan`` under a second of CPU)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gpuscale.planning import cache


def _numbers(value: object) -> list[float]:
    """Every number in a nested structure, in a fixed order."""
    if isinstance(value, dict):
        return [x for k in sorted(value) for x in _numbers(value[k])]
    if isinstance(value, list):
        return [x for v in value for x in _numbers(v)]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return []
    return [float(value)]


@pytest.mark.slow
def test_the_shipped_fits_are_the_bundled_datas() -> None:
    """The stamp matches, and a fresh fit (about 20 s) gives the same numbers."""
    shipped = cache.bundled_fits()
    assert shipped is not None, "stale: run `python -m gpuscale.planning.cache`"
    from gpuscale import load_round

    fresh = cache.fits_of(load_round().scores)
    assert sorted(shipped["workloads"]) == sorted(fresh["workloads"])
    np.testing.assert_allclose(_numbers(shipped), _numbers(fresh), rtol=1e-6, atol=1e-9)


def test_a_stale_stamp_is_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stale = tmp_path / "plan_fits.json"
    stale.write_text(json.dumps({"version": "0:old", "fits": {"workloads": {}}}))
    monkeypatch.setattr(cache, "FITS_FILE", stale)
    assert cache.bundled_fits() is None
    stale.write_text("{not json")
    assert cache.bundled_fits() is None


def test_a_plan_of_the_bundled_rounds_loads_neither_pandas_nor_numpy() -> None:
    code = (
        "import sys\n"
        "from gpuscale.cli import main\n"
        "sys.argv = ['gpuscale', 'plan', '-w', 'bert', '-a', 'H100', '-f', 'json']\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print(sorted(m for m in ('pandas', 'numpy') if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
    assert (
        json.loads("\n".join(done.stdout.strip().splitlines()[:-1]))["rows"][0]["accelerators"] == 8
    )
