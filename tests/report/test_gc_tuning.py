"""A report runs with fewer garbage collections (the heap alive at its start frozen, a
larger young generation) and leaves the collector as it found it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import gpuscale.report.html as html_module
from gpuscale.analysis import AnalysisOptions
from gpuscale.mlperf.ingest import read_round

from .test_cache import _round


def test_the_report_collects_less_and_restores_the_collector(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = read_round(_round(tmp_path))
    seen: list[tuple[tuple[int, int, int], int]] = []
    findings = html_module.workload_findings

    def watched(*args, **kwargs):  # the collector's state while the report analyses
        seen.append((gc.get_threshold(), gc.get_freeze_count()))
        return findings(*args, **kwargs)

    monkeypatch.setattr(html_module, "workload_findings", watched)
    gc.unfreeze()
    before = gc.get_threshold()
    html_module.build_report(
        tables, ["bert"], tmp_path / "out", AnalysisOptions(n_boot=100), workers=1
    )
    (threshold, frozen), *_ = seen
    assert threshold[0] >= 10 * before[0], "young generation not enlarged during the report"
    assert frozen > 1000, "the heap alive at the start was not frozen"
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
