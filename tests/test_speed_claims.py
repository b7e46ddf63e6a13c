"""The C line scan's speed-up is said with the figures docs/speed.md measured, the same in
the README, setup.py and the scanner's docstring (they said 1.5x, 4x and 3.8x), and the
figures there are the medians of the runs it lists."""

from __future__ import annotations

import re
import statistics
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
    """(scan, read) as docs/speed.md states them, checked against the runs it lists."""
    text = (ROOT / "docs" / "speed.md").read_text()
    said = _one(r"the line scan alone took \*\*([\d.]+)x\*\*.*?\(medians of paired rounds "
                r"([\d.]+)x, ([\d.]+)x and ([\d.]+)x\), the whole directory read \*\*([\d.]+)x\*\* "
                r"\(the last run, 7 rounds: CPU time ([\d.]+)x median", text)  # fmt: skip
    scan, runs, read, cpu = said.group(1), said.groups()[1:4], said.group(5), said.group(6)
    assert f"{statistics.median(float(r) for r in runs):.1f}" == scan
    assert f"{float(cpu):.1f}" == read
    return scan, read


def test_every_claim_of_the_c_scan_is_the_measured_one() -> None:
    scan, read = measured()
    for name, pattern in CLAIMS.items():
        said = _one(pattern, (ROOT / name).read_text())
        if name == "README.md":  # slower without it: the read first, then the scan
            assert (said.group(2), said.group(1)) == (scan, read), name
        else:
            assert (said.group(1), said.group(2)) == (scan, read), name
