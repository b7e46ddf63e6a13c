"""``docs/speed.md`` and the README quote ``benchmarks/results/report_speed.json``: the
report's speed is the figures the benchmark wrote, never prose numbers."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _benchmark():
    spec = importlib.util.spec_from_file_location("report_speed", ROOT / "benchmarks/report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_docs_table_is_the_files() -> None:
    bench = _benchmark()
    figures = json.loads(bench.RESULTS.read_text())
    doc = (ROOT / "docs" / "speed.md").read_text()
    assert doc.split(bench.BEGIN)[1].split(bench.END)[0] == bench.markdown(figures)
    # every case of the benchmark, each with its runs
    cases = {"baseline", "baseline, cached", "now, first run", "now, cached"}
    assert set(figures["cases"]) == cases
    assert all(len(c["runs"]) >= 1 for c in figures["cases"].values())


def test_the_readmes_report_row_quotes_the_files_medians() -> None:
    figures = json.loads(_benchmark().RESULTS.read_text())["cases"]
    readme = (ROOT / "README.md").read_text()
    (row,) = [line for line in readme.splitlines() if line.startswith("| Figures and")]
    first, cached = figures["now, first run"], figures["now, cached"]
    said = [f"{first['median_cpu_s']} CPU-s ({first['median_wall_s']} s wall)"]
    said += [f"{cached['median_cpu_s']} CPU-s ({cached['median_wall_s']} s)"]
    assert all(s in row for s in said), (said, row)
    assert "report_speed.json" in row
