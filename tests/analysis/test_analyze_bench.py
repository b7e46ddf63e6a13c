"""``analyze --bench`` of a results table as the library gives it
(``analysis.bench_answer.analyze_bench``): the answer or the whole table, the bench's part
of ``-f json`` only where asked, and whether any run measured (none: exit 1)."""

from __future__ import annotations

from gpuscale.analysis.bench_answer import ANSWER_SHOWN, analyze_bench
from gpuscale.bench.results import bench_table

from ..builders import bench_record, one_and_two


def test_the_answer_or_the_whole_table_its_document_only_where_asked() -> None:
    table = bench_table(one_and_two("mlp-1m", 10**6))
    answer = analyze_bench(table, answer=True, document=False)
    assert answer.measured and answer.document is None and answer.view.document is None
    assert set(answer.view.shown) <= set(ANSWER_SHOWN)
    whole = analyze_bench(table, answer=False, document=True)
    assert whole.document is not None and whole.document["source"] == "bench"
    two = next(r for r in whole.document["runs"] if r["accelerators"] == 2)
    assert two["speedup"] == 1.5  # 1,500 samples/s against 1,000
    # alone, -f json prints the whole document: no round beside the bench, no note
    assert whole.view.document == {"rounds": [], "bench": whole.document, "notes": []}
    assert len(whole.view.shown) > len(answer.view.shown)


def test_a_file_of_failed_runs_alone_measured_nothing() -> None:
    rows = [bench_record("mlp-1m", 10**6, n, 0.0, status="oom") for n in (1, 2)]
    analysed = analyze_bench(bench_table(rows), answer=True, document=False)
    assert not analysed.measured and analysed.view.empty  # said why, then exit 1
