"""Shared fixtures: the bundled rounds and their analyses, computed once per session, and
where the raw rounds lie (``../shared/mlperf``, optional)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import pytest
from filelock import FileLock
from hypothesis import settings

from gpuscale.analysis import AnalysisOptions, WorkloadAnalysis, analyze
from gpuscale.mlperf import load_round, read_round
from gpuscale.tables import STUDY_WORKLOADS, RoundTables

from .golden import UPDATE_FLAG, Golden

ROOT = Path(__file__).resolve().parents[1]

# pytest-xdist (`-n 2`, the README's test command) gives each worker its own terminal's
# COLUMNS=80; the tests are written for output that is no terminal and sets no width, as
# in a serial run, so a worker drops the width xdist gave it (a test sets its own).
if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("COLUMNS") == "80":
    del os.environ["COLUMNS"]
SHARED = ROOT.parent / "shared" / "mlperf"

# Property tests draw the same examples on every run and machine (``derandomize``), so a
# run that passed here passes in CI; ``HYPOTHESIS_PROFILE=explore`` draws new ones each run
# (docs/development.md), and a failure found that way is kept as an ``@example``. No
# deadline: an example's time is the machine's load, not a property (speed is measured by
# benchmarks/, never by a timed test).
settings.register_profile("repeatable", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", derandomize=False, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        UPDATE_FLAG,
        action="store_true",
        help="write the rendered text of every golden case that differs (tests/golden.py)",
    )


@pytest.fixture(scope="session")
def update_golden(request: pytest.FixtureRequest) -> bool:
    """Whether this run writes golden files instead of comparing with them."""
    return bool(request.config.getoption(UPDATE_FLAG))


@pytest.fixture(scope="session")
def golden(update_golden: bool) -> Golden:
    """Rendered text compared with ``tests/golden/<view>.json`` (``--update-golden``
    writes it)."""
    return Golden(update=update_golden)


@pytest.fixture(scope="session", autouse=True)
def _cache_home(tmp_path_factory: pytest.TempPathFactory):
    """Reports cache their figures under ``$XDG_CACHE_HOME``: a folder of this session's,
    never the home of whoever runs the tests (subprocesses inherit it)."""
    with pytest.MonkeyPatch.context() as patch:
        # the official tool's cached output (tests/mlperf/official.py) stays the user's
        user = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        patch.setenv("GPUSCALE_TESTS_CACHE_HOME", os.environ.get("GPUSCALE_TESTS_CACHE_HOME", user))
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache-home")))
        yield


@pytest.fixture(scope="session")
def v41() -> RoundTables:
    """The bundled v4.1 round (the study's)."""
    return load_round("v4.1")


@pytest.fixture(scope="session")
def v50() -> RoundTables:
    return load_round("v5.0")


@pytest.fixture(scope="session")
def bundled() -> RoundTables:
    """Every bundled round."""
    return load_round()


@pytest.fixture(scope="session")
def study_analysis(v41: RoundTables) -> dict[str, list[WorkloadAnalysis]]:
    """The analysis of the study's four workloads of v4.1 under both reference rules
    (300 bootstrap resamples: intervals are not what these tests check)."""
    return {
        rule: analyze(v41, list(STUDY_WORKLOADS), AnalysisOptions(reference=rule, n_boot=300))
        for rule in ("study", "family")
    }


@pytest.fixture(scope="session")
def shared_archive():
    """``shared_archive("v4.1")``: the raw round's archive, or skip without ../shared."""

    def find(round_name: str) -> Path:
        path = SHARED / f"training_results_{round_name}.tar.xz"
        if not path.exists():
            pytest.skip(f"{path} not present (raw MLPerf rounds live beside the checkout)")
        return path

    return find


@pytest.fixture(scope="session")
def run_folder(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """A folder of this test run's shared by pytest-xdist's workers (a serial run's own)."""
    base = tmp_path_factory.getbasetemp()
    return base if worker_id == "master" else base.parent


@pytest.fixture(scope="session")
def fresh_round(shared_archive, run_folder: Path):
    """``fresh_round("v4.0")``: ``read_round`` of the raw archive in ../shared, read once a
    test run (a worker pickles the tables for the other, which waits on a lock); tests read
    them and never change them."""
    held: dict[str, RoundTables] = {}

    def read(round_name: str) -> RoundTables:
        if round_name not in held:
            archive = shared_archive(round_name)
            pickled = run_folder / f"fresh-round-{round_name}.pickle"
            with FileLock(f"{pickled}.lock"):
                if pickled.exists():
                    held[round_name] = pickle.loads(pickled.read_bytes())
                else:
                    held[round_name] = read_round(archive)
                    pickled.write_bytes(pickle.dumps(held[round_name]))
        return held[round_name]

    return read


H100 = ROOT.parent / "shared" / "gpu" / "h100"


@pytest.fixture(scope="session")
def h100():
    """``h100("sweep.jsonl")``: a file of the real H100 bench rows, or skip without them."""

    def find(name: str) -> Path:
        path = H100 / name
        if not path.exists():
            pytest.skip(f"{path} not present (the H100 rows live beside the checkout)")
        return path

    return find


@pytest.fixture
def unenterable(monkeypatch: pytest.MonkeyPatch):
    """``unenterable(folder)``: ``folder`` made one this user may not enter (mode 000), as
    another user's folder in /tmp or /home, or /root, is to everyone else: a look at
    anything inside it raises PermissionError. Root enters any folder, so there the
    kernel's refusal is made by ``os.stat`` (what ``Path.is_dir``, ``exists`` and
    ``os.path.isdir`` ask). The folders are opened again at the end."""
    import errno

    locked: list[Path] = []
    real_stat = os.stat

    def stat(path, *args, **kwargs):
        name = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else ""
        if any(name.startswith(f"{folder}{os.sep}") for folder in locked):  # not an fd's
            raise PermissionError(errno.EACCES, "Permission denied", name)
        return real_stat(path, *args, **kwargs)

    def lock(folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0)
        locked.append(folder)
        if os.geteuid() == 0:
            monkeypatch.setattr(os, "stat", stat)
        return folder

    yield lock
    for folder in locked:
        folder.chmod(0o755)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``gpu`` skip without a CUDA device (torch loaded only if one is)."""
    marked = [item for item in items if item.get_closest_marker("gpu")]
    if not marked:
        return
    try:
        import torch  # lazy: torch, only when a gpu-marked test was collected

        cuda = torch.cuda.is_available()
    except ImportError:
        cuda = False
    if not cuda:
        for item in marked:
            item.add_marker(pytest.mark.skip(reason="needs a CUDA device"))
