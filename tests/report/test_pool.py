"""The report's processes: the forked figure worker gives the same report as inline."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gpuscale import load_round
from gpuscale.analysis import AnalysisOptions
from gpuscale.report.html import build_report
from gpuscale.report.pool import Inline, figure_executor
from tests.builders import undated


def test_inline_executor_returns_results_and_exceptions() -> None:
    pool = Inline()
    assert pool.submit(divmod, 7, 2).result() == (3, 1)
    with pytest.raises(ZeroDivisionError):
        pool.submit(divmod, 1, 0).result()


def test_one_figure_worker_is_inline() -> None:
    assert isinstance(figure_executor(1), Inline)


def test_report_is_the_same_with_the_figure_worker(tmp_path) -> None:
    tables = load_round("v4.1")
    options = AnalysisOptions(n_boot=100)
    inline = build_report(tables, ["retinanet"], tmp_path / "a", options, workers=1)
    forked = build_report(tables, ["retinanet"], tmp_path / "b", options, workers=2)

    def page(path):  # the generation time aside
        return undated(path.read_text())

    assert page(inline) == page(forked)
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == sorted(
        p.name for p in (tmp_path / "b").iterdir()
    )


def test_the_report_module_leaves_matplotlib_to_the_process_that_draws() -> None:
    """The main process of a report analyses; matplotlib (~0.6 s) is imported by the
    figure worker when it draws its first figure, off the main process's path (and not
    at all by a report whose figures all come from the cache)."""
    code = (
        "import sys, gpuscale.report.html; "
        "print(any(m.startswith('matplotlib') for m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert done.stdout.strip() == "False", done.stderr


def test_every_workload_figure_has_a_name_for_the_sentence() -> None:
    from gpuscale.report.figures import FIGURES
    from gpuscale.report.workload_figures import FIGURE_NAMES, FIRST_FIGURES

    assert list(FIGURE_NAMES) == list(FIGURES)
    assert set(FIRST_FIGURES) <= set(FIGURES)


def test_matplotlib_gets_a_folder_it_can_write_only_where_it_cannot_make_its_own(
    tmp_path, monkeypatch
) -> None:
    """A walk with an unwritable home saw matplotlib's two-line warning in the report's
    output; where matplotlib can make its folder, nothing is set."""
    import os

    from gpuscale.report.pool import matplotlib_home

    monkeypatch.setenv("MPLCONFIGDIR", "")  # restored after the test, whatever it sets
    monkeypatch.delenv("MPLCONFIGDIR")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    matplotlib_home()
    assert "MPLCONFIGDIR" not in os.environ and (tmp_path / "matplotlib").is_dir()
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    matplotlib_home()
    assert "MPLCONFIGDIR" not in os.environ and (tmp_path / "matplotlib").is_dir()
    monkeypatch.setenv("XDG_CONFIG_HOME", "/proc/no-such-folder")  # no one can make it
    matplotlib_home()
    assert os.path.isdir(os.environ["MPLCONFIGDIR"])


def test_an_unwritable_cache_folder_leaves_matplotlib_quiet_and_no_folder_behind(
    tmp_path,
) -> None:
    """``XDG_CACHE_HOME=/proc/x gpuscale report``: the config folder could be made, so
    matplotlib was left to find its cache folder, could not, and printed two lines into
    the report's output. The temporary folder it is given is removed at exit."""
    import os
    import subprocess
    import sys

    script = (
        "from gpuscale.report.pool import matplotlib_home\n"
        "matplotlib_home()\n"
        "import matplotlib\n"
        "print(matplotlib.get_cachedir(), matplotlib.get_configdir())\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "MPLCONFIGDIR"}
    env |= {"HOME": str(tmp_path), "XDG_CONFIG_HOME": "", "XDG_CACHE_HOME": "/proc/x"}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    cache, config = done.stdout.split()
    assert cache == config and not cache.startswith(str(tmp_path))  # one folder, its own
    assert not os.path.exists(cache)  # removed as the process ended
