"""What the README and docs/interconnect.md say of the GPU checks is what the checks'
output file holds: no file, no claim that they pass (they said it and "not run yet")."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "gpu_validate.json"


def _said() -> str:
    return " ".join(
        " ".join((ROOT / name).read_text().split())
        for name in ("README.md", "docs/interconnect.md")
    )


def _claims() -> list[str]:
    """The README's table rows and the docs' paragraphs that speak of the GPU checks."""
    units: list[str] = []
    for name in ("README.md", "docs/interconnect.md"):
        text = (ROOT / name).read_text()
        for unit in re.split(r"\n\s*\n|\n(?=\|)", text):
            if "gpu_validate" in unit or "GPU checks" in unit:
                units.append(" ".join(unit.split()))
    return units


def test_the_gpu_checks_are_claimed_as_their_file_says() -> None:
    said = _said()
    if not RESULTS.exists():
        assert "have no recorded GPU run" in said and "no such run is recorded yet" in said
        assert "gpu_validate.py` pass" not in said
        return
    record = json.loads(RESULTS.read_text())
    claims = _claims()
    assert len(claims) >= 2  # the README's row and the docs' paragraph
    failed = [v["check"] for v in record["verdicts"] if v["result"] != "PASS"]
    for claim in claims:
        assert record["device"] in claim, claim
        assert "no such run is recorded yet" not in claim
        if failed:
            assert "fail" in claim.lower() and all(check in claim for check in failed), claim
        else:
            assert "pass" in claim.lower() and "fail" not in claim.lower(), claim
