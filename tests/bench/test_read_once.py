"""A file given to the wrong option is told by what was read, not by reading it again: a
pipe (``--bench <(ssh host cat sweep.jsonl)``) can be read only once, and the second
reading found it empty and blocked until a writer came (the message then said "no
results in it" instead of naming what the file holds)."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import pytest

from gpuscale.bench.results import ResultsError, load_bench
from gpuscale.interconnect.records import read_collectives
from gpuscale.tables.requests import NamedError

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")

COLLECTIVES_LINE = {"schema": "gpuscale.collectives/2", "kind": "sweep", "sweep_id": "s1"}
BENCH_LINE = {"schema": "gpuscale.bench/2", "key": "k", "status": "ok"}


def _pipe_of(tmp_path: Path, record: dict) -> Path:
    """A named pipe that gives ``record``'s line to its first reader; a later reader gets
    an empty pipe after 3 s (instead of waiting for a writer for ever)."""
    pipe = tmp_path / "given.jsonl"
    os.mkfifo(pipe)

    def write() -> None:
        with open(pipe, "w") as f:
            f.write(json.dumps(record) + "\n")
        time.sleep(3)
        with open(pipe, "w"):  # a second reader gets end of file
            pass

    threading.Thread(target=write, daemon=True).start()
    return pipe


def test_sweeps_given_as_bench_results_are_named_from_one_reading(tmp_path: Path) -> None:
    with pytest.raises(ResultsError) as caught:
        load_bench(_pipe_of(tmp_path, COLLECTIVES_LINE))
    assert "holds `gpuscale collectives` sweeps" in str(caught.value)
    assert "--collectives" in str(caught.value)


def test_bench_results_given_as_sweeps_are_named_from_one_reading(tmp_path: Path) -> None:
    with pytest.raises(NamedError) as caught:
        read_collectives(_pipe_of(tmp_path, BENCH_LINE))
    assert "no collectives measurement" in str(caught.value)
    assert "holds `gpuscale bench` results: give it as bench=" in str(caught.value)
