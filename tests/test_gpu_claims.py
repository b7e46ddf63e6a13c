"""What the README and docs/interconnect.md say of the GPU checks is what the checks'
output file holds: no file, no claim that they pass (they said it and "not run yet")."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "gpu_validate.json"


def _said() -> str:
    return " ".join(
        " ".join((ROOT / name).read_text().split())
        for name in ("README.md", "docs/interconnect.md")
    )


def test_the_gpu_checks_are_claimed_as_their_file_says() -> None:
    said = _said()
    if not RESULTS.exists():
        assert "have no recorded GPU run" in said and "no such run is recorded yet" in said
        assert "gpu_validate.py` pass" not in said
        return
    record = json.loads(RESULTS.read_text())
    results = {v["result"] for v in record["verdicts"]}
    assert record["device"] in said
    assert ("FAIL" in results) == ("fail" in said.lower())
