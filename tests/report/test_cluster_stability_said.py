"""A workload's section of the report says how its clusters hold with each system left
out in the clustering's own sentence, naming the system whose leaving out moves them
most as ``analyze --explain`` does; a name from the logs stays escaped."""

from __future__ import annotations

from dataclasses import replace
from html import escape

from gpuscale.analysis import AnalysisOptions
from gpuscale.analysis.analyze import analyze
from gpuscale.report.findings import workload_findings
from gpuscale.report.page import Section, render_html

from .ragged import rows_of, tables_of, with_holes

EVIL = "<script>alert(1)</script>"
# six systems at 8 accelerators, 10-15 min, and one far faster at 512: a cluster of its
# own, and without it the six split 3 and 3 (6 of 15 pairs treated alike: 0.40)
SYSTEMS = (
    *((f"S{i}", "H100-SXM5-80GB", 8, 10.0 + i) for i in range(6)),
    ("Far", "H100-SXM5-80GB", 512, 1.0),
)


def test_the_cluster_sentence_says_how_they_hold_and_names_the_system_escaped() -> None:
    tables = tables_of(with_holes(rows_of(SYSTEMS), {}))
    [result] = analyze(tables, ["bert"], AnalysisOptions(n_boot=100))
    table = result.table.copy()
    table.loc[table["submitter"] == "Far", "system_name"] = EVIL
    found = workload_findings(replace(result, table=table), "study")
    [said] = [f for f in found if f.startswith("K-means")]
    assert said == (
        "K-means finds 2 clusters of behaviour (silhouette 0.74); leaving one system out: "
        f"agreement 0.40-1.00, median 1.00; k 2 each time; least without Far {EVIL} "
        "(512 x H100-SXM5-80GB)."
    )
    page = render_html(tables, [Section("bert", "BERT", found, [], [])], None, AnalysisOptions())
    assert EVIL not in page and f"least without Far {escape(EVIL, quote=False)} (512" in page
