"""What a finished `gpuscale collectives` run says beside its verdict: the results file's
lines it could not read, and the file the sweep was appended to (a real sweep of two gloo
processes, 1 KiB, one call per size)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gpuscale.cli import app

TINY = ["--backend", "gloo", "--nproc", "2", "--max-bytes", "1K", "--iters", "1"]


@pytest.mark.slow
def test_a_sweep_says_the_lines_it_skipped_and_where_it_was_appended(tmp_path: Path) -> None:
    """A user walk: a file whose last line was cut short was read (its problems collected)
    and never said, and a run that succeeded never said which file it appended to."""
    pytest.importorskip("torch")
    out = tmp_path / "coll.jsonl"
    header = {"schema": "gpuscale.collectives/2", "kind": "sweep", "sweep_id": "old"}
    out.write_text(json.dumps(header) + "\n" + '{"schema": "gpuscale.collectives/2", "ki\n')
    result = CliRunner().invoke(app, ["collectives", *TINY, "--warmup", "0", "--out", str(out)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # folded at the terminal's width
    assert f"warning: {out}:2: not a JSON record" in said, said
    assert said.count("not a JSON record") == 1
    tail = result.output.strip().splitlines()[-1]
    assert tail.startswith("sweep ") and tail.endswith(f"result rows appended to {out}"), tail
