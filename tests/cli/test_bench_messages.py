"""What ``gpuscale bench`` says when it ends: on a multi-node sweep the node that wrote
no rows says which node does and why, as docs/interconnect.md does."""

from __future__ import annotations

from pathlib import Path

from gpuscale.bench.runner import SweepReport
from gpuscale.bench.sweep_plan import done_sentence

DOCS = Path(__file__).resolve().parents[2] / "docs" / "interconnect.md"


def test_a_node_that_wrote_no_rows_says_node_rank_does_not_decide() -> None:
    said = done_sentence(SweepReport(), Path("two-nodes.jsonl"), nnodes=2)
    assert "this node wrote no rows" in said
    assert "global rank 0" in said and "not by --node-rank" in said
    docs = " ".join(DOCS.read_text().split())
    assert "not by `--node-rank`" in docs and "either command may be" in docs
    assert "Global rank 0 appends the rows" not in docs


def test_the_writer_says_what_it_appended() -> None:
    said = done_sentence(SweepReport(appended=1, measured=1), Path("two-nodes.jsonl"), nnodes=2)
    assert "1 measured, 1 row appended to two-nodes.jsonl" in said
