"""``docs/speed.md``'s figures for reading a round are those
``benchmarks/results/ingest_speed.json`` holds, rendered by the benchmark itself
(``benchmarks/ingest.py``), never prose numbers from a printed run; and the run quoted is
one of the C line scanner (its ratio to the regex scan is the C scanner's speed-up)."""

from __future__ import annotations

import json
import re

from .builders import benchmark_script


def test_the_docs_paragraphs_are_the_files() -> None:
    bench = benchmark_script("ingest")
    figures = json.loads(bench.RESULTS.read_text())
    doc = (bench.ROOT / "docs" / "speed.md").read_text()
    assert doc.split(bench.BEGIN)[1].split(bench.END)[0] == bench.markdown(figures)
    assert doc.split(bench.NO_C_BEGIN)[1].split(bench.NO_C_END)[0] == bench.markdown_no_c(figures)


def test_the_file_says_where_and_how_it_was_measured() -> None:
    bench = benchmark_script("ingest")
    figures = json.loads(bench.RESULTS.read_text())
    assert figures["scanner"] == "C" and "C scan (_scan.c)" in figures["runs"]
    assert re.fullmatch(r"[0-9a-f]{7,40}", figures["commit"]), figures["commit"]
    assert figures["cores"] >= 1 and figures["date"]
    assert len(figures["load_average_before"]) == len(figures["load_average_after"]) == 3
    # every contender timed in every round, and the ratios paired round by round
    rounds = {len(r["runs"]) for n, r in figures["runs"].items() if "official" not in n}
    assert len(rounds) == 1
    assert all(len(r["per_round"]) in rounds for r in figures["ratios"].values())
