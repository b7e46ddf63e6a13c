"""The report's processes: the early analysis worker gives the same report as inline."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import pytest

from gpuscale import load_round
from gpuscale.analysis import AnalysisOptions
from gpuscale.report.html import build_report
from gpuscale.report.pool import Inline, analysis_executor, figure_executor


def test_inline_executor_returns_results_and_exceptions() -> None:
    pool = Inline()
    assert pool.submit(divmod, 7, 2).result() == (3, 1)
    with pytest.raises(ZeroDivisionError):
        pool.submit(divmod, 1, 0).result()


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: everything runs inline")
def test_analysis_worker_is_another_process() -> None:
    with analysis_executor() as pool:
        assert pool.submit(os.getpid).result() != os.getpid()


_KMEANS_AFTER_PARENT = """
import numpy as np
from sklearn.cluster import KMeans
from gpuscale.report.pool import analysis_executor

def labels():
    x = np.random.default_rng(1).normal(size=(400, 3))
    return KMeans(n_clusters=3, n_init=2, random_state=0).fit_predict(x).tolist()

expected = labels()  # the parent runs OpenMP code first
with analysis_executor() as pool:
    assert pool.submit(labels).result() == expected
print("same labels")
"""


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: everything runs inline")
def test_analysis_worker_runs_kmeans_after_the_parent_did() -> None:
    # GNU libgomp is not fork-safe: a child of a process that already ran OpenMP code
    # hangs in its first parallel region unless the worker limits OpenMP to one thread.
    # In a process group of its own, so that a hang is killed whole and fails the test.
    child = subprocess.Popen(
        [sys.executable, "-c", _KMEANS_AFTER_PARENT],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = child.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate()
        pytest.fail("the analysis worker hung running K-means after its parent had")
    assert child.returncode == 0, output
    assert "same labels" in output


def test_one_figure_worker_is_inline() -> None:
    assert isinstance(figure_executor(1), Inline)


def test_report_is_the_same_with_the_analysis_worker(tmp_path) -> None:
    tables = load_round("v4.1")
    options = AnalysisOptions(n_boot=100)
    inline = build_report(tables, ["retinanet"], tmp_path / "a", options, workers=1)
    with analysis_executor() as pool:
        forked = build_report(
            tables, ["retinanet"], tmp_path / "b", options, workers=2, analysis=pool
        )

    def page(path):  # the generation time aside
        return re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", "", path.read_text())

    assert page(inline) == page(forked)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(
        p.name for p in (tmp_path / "b").iterdir()
    )
