"""What ``gpuscale bench`` says when it ends: on a multi-node sweep the node that wrote
no rows says which node does and why, as docs/interconnect.md does. The sentences are the
golden view ``cli/bench_messages``."""

from __future__ import annotations

from pathlib import Path

from gpuscale.bench.runner import SweepReport
from gpuscale.bench.sweep_plan import WRITER, done_sentence

DOCS = Path(__file__).resolve().parents[2] / "docs" / "interconnect.md"
VIEW = "cli/bench_messages"


def test_a_node_that_wrote_no_rows_says_node_rank_does_not_decide(golden) -> None:
    said = done_sentence(SweepReport(), Path("two-nodes.jsonl"), nnodes=2)
    assert WRITER in said and "two-nodes.jsonl" not in said  # which node writes, no file
    assert "global rank 0" in WRITER and "--node-rank" in WRITER
    golden.check(VIEW, "a node that wrote no rows", said)
    docs = " ".join(DOCS.read_text().split())
    assert "not by `--node-rank`" in docs and "either command" in docs  # as WRITER says
    assert "Global rank 0" not in docs  # whichever node holds it appends


def test_the_writer_says_what_it_appended(golden) -> None:
    said = done_sentence(SweepReport(appended=1, measured=1), Path("two-nodes.jsonl"), nnodes=2)
    assert WRITER not in said and "two-nodes.jsonl" in said
    assert said.startswith("1 measured") and " 1 row " in said
    golden.check(VIEW, "the writer node", said)


def test_a_path_with_a_space_is_said_as_one_shell_word() -> None:
    said = done_sentence(SweepReport(appended=2, measured=2), Path("my runs/r.jsonl"), nnodes=1)
    assert "'my runs/r.jsonl'" in said  # pasted into `gpuscale advise --bench`, it stays whole
