"""The C line scan's speed-up is said with the figures ``benchmarks/ingest.py`` measured
and wrote to ``benchmarks/results/ingest_speed.json`` (docs/speed.md renders them; a test
holds that page to the file), the same in the README, setup.py and the scanner's
docstring (they said 1.5x, 4x and 3.8x)."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Each file's sentence: (the scan alone, a whole round's read).
CLAIMS = {
    "README.md": r"about ([\d.]+)x slower \(the line scan itself about ([\d.]+)x",
    "setup.py": r"about ([\d.]+)x as fast as the\s+regex path, which makes reading a whole "
    r"round about ([\d.]+)x",
    "src/gpuscale/mlperf/mllog.py": r"about ([\d.]+)x the regex path; a whole round's read "
    r"about ([\d.]+)x",
}


def _one(pattern: str, text: str) -> re.Match[str]:
    found = re.findall(pattern, " ".join(text.split()), flags=re.S)
    assert len(found) == 1, (pattern, found)
    return re.search(pattern, " ".join(text.split()), flags=re.S)  # type: ignore[return-value]


def measured() -> tuple[str, str]:
    """(scan, read) as the results file has them, at the one decimal the claims use: the
    line scan alone and the whole directory read (CPU time), regex over C, paired medians."""
    ratios = json.loads((ROOT / "benchmarks/results/ingest_speed.json").read_text())["ratios"]
    scan = ratios["regex scan / C scan"]["median"]
    read = ratios["dir read CPU, no C / with C"]["median"]
    return f"{scan:.1f}", f"{read:.1f}"


def test_every_claim_of_the_c_scan_is_the_measured_one() -> None:
    scan, read = measured()
    for name, pattern in CLAIMS.items():
        said = _one(pattern, (ROOT / name).read_text())
        if name == "README.md":  # slower without it: the read first, then the scan
            assert (said.group(2), said.group(1)) == (scan, read), name
        else:
            assert (said.group(1), said.group(2)) == (scan, read), name
