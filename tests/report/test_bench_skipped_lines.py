"""The results file's lines the loader skipped are said in the report's bench section,
each with why, escaped: the terminal warned of them and the page dropped their runs
silently."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from typer.testing import CliRunner

from gpuscale.bench.results import bench_table, load_bench, read_results
from gpuscale.cli import app
from gpuscale.report.bench_section import SKIPPED_SHOWN, build_bench_section
from gpuscale.report.svg import FigureFiles

from ..builders import bench_record
from ..mlperf.logbuilder import RoundBuilder

EVIL = "<script>alert(1)</script>"


class _Items(HTMLParser):
    """The text of each ``<li>`` of the ``<ul>`` whose class holds ``wanted``."""

    def __init__(self, wanted: str) -> None:
        super().__init__()
        self.wanted, self.inside, self.items = wanted, False, []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "ul":
            self.inside = self.wanted in (dict(attrs).get("class") or "").split()
        elif tag == "li" and self.inside:
            self.items.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "ul":
            self.inside = False

    def handle_data(self, data: str) -> None:
        if self.inside and self.items:
            self.items[-1] += data


def _file_with_skipped_lines(path: Path) -> None:
    """Two runs read, three lines skipped: a global batch that is not batch x N, a line
    that is no JSON, a step time written as (hostile) text."""
    rows = [bench_record("a", 10**5, n, 100.0 * n) for n in (1, 2)]
    contradicted = bench_record("b", 10**5, 2, 150.0)
    contradicted["config"]["global_batch"] = 17
    texted = bench_record("c", 10**5, 2, 150.0)
    texted["timing"]["step_ms_mean"] = EVIL
    lines = [json.dumps(r) for r in [*rows, contradicted]] + ['{"status": "ok", ' + EVIL]
    path.write_text("\n".join([*lines, json.dumps(texted)]) + "\n")


def test_the_report_lists_the_lines_skipped_escaped(tmp_path: Path) -> None:
    bench = tmp_path / "b.jsonl"
    _file_with_skipped_lines(bench)
    skipped = load_bench(bench).skipped
    assert [line.split(":")[1] for line in skipped] == ["3", "4", "5"]
    root = RoundBuilder().system("Acme", "box").runs("Acme", "box", "bert", [3, 2, 4])
    args = ["report", str(root.write_dir(tmp_path)), "--bench", str(bench)]
    done = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "r")])
    assert done.exit_code == 0, done.output
    html = (tmp_path / "r" / "index.html").read_text()
    assert EVIL not in html
    items = _Items("skipped")
    items.feed(html)
    assert items.items == skipped  # every one, its reason whole, as the terminal says it


def test_past_a_screen_of_lines_the_rest_are_counted(tmp_path: Path) -> None:
    bench = tmp_path / "b.jsonl"
    _file_with_skipped_lines(bench)
    table = bench_table(read_results(bench)[0])
    many = [f"b.jsonl:{n}: not JSON; skipped" for n in range(SKIPPED_SHOWN + 5)]
    section = build_bench_section(table, FigureFiles(tmp_path), skipped=many)
    assert section.skipped[:-1] == many[:SKIPPED_SHOWN]
    assert section.skipped[-1].startswith("5 more lines")
    assert build_bench_section(table, FigureFiles(tmp_path)).skipped == []
