"""The README's picture is what its main command draws (issue 57, item 7): the overview
``gpuscale report`` puts on its first screen, as ``--png`` writes it."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpuscale import load_round
from gpuscale.analysis import AnalysisOptions
from gpuscale.report.html import build_report
from gpuscale.tables import STUDY_WORKLOADS

ROOT = Path(__file__).resolve().parents[2]
PICTURE = ROOT / "docs" / "report-overview.png"
REMAKE = (
    "gpuscale report --png --no-cache --out /tmp/r && cp /tmp/r/v4.1_overview.png "
    "docs/report-overview.png"
)


def test_the_readme_shows_the_picture() -> None:
    for page in (ROOT / "README.md", ROOT / "docs" / "index.md"):
        assert "report-overview.png)" in page.read_text(), page


def test_the_readme_picture_is_what_the_main_command_draws(tmp_path: Path) -> None:
    """The default report's options (the main command's: v4.1, the study's workloads,
    every default), the overview drawn as PNG: the same size and, but for anti-aliasing
    of a different font build, the same pixels. Remake it with: ``REMAKE``."""
    from PIL import Image

    build_report(load_round("v4.1"), list(STUDY_WORKLOADS), tmp_path, AnalysisOptions(), png=True)
    with Image.open(tmp_path / "v4.1_overview.png") as drawn, Image.open(PICTURE) as shown:
        assert drawn.size == shown.size, f"the README picture is stale: {REMAKE}"
        new = np.asarray(drawn.convert("RGB"), dtype=int)
        old = np.asarray(shown.convert("RGB"), dtype=int)
    differ = (np.abs(new - old).max(axis=2) > 40).mean()
    assert differ < 0.002, f"{differ:.2%} of the pixels differ; the picture is stale: {REMAKE}"
