"""The report draws SVG only unless PNG is asked for, and reuses what an earlier report of
the same data and code drew and found, never what another's did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import gpuscale.report.analysed as analysed_module
import gpuscale.report.figures as figures_module
import gpuscale.report.html as html_module
from gpuscale.analysis import AnalysisOptions
from gpuscale.cli import app
from gpuscale.mlperf.ingest import read_round
from gpuscale.report.html import build_report
from gpuscale.sources.disk_cache import Cache
from tests.builders import undated

from ..mlperf.logbuilder import RoundBuilder


def _round(tmp_path: Path, slow_minutes: float = 40.0) -> Path:
    builder = RoundBuilder()
    for k, (n, minutes) in enumerate(((8, slow_minutes), (16, 22.0), (32, 13.0), (64, 8.0))):
        builder.system("Acme", f"box{k}", per_node=str(n)).runs(
            "Acme", f"box{k}", "bert", [minutes * f for f in (1.0, 1.02, 0.98, 1.01, 0.99)]
        )
    return builder.write_dir(tmp_path / f"round-{slow_minutes}")


def _page(path: Path) -> str:
    return undated(path.read_text())


def _report(tables, out: Path, cache: Path | None, png: bool = False) -> Path:
    """Every figure (``all_figures``): each one is cached."""
    options = AnalysisOptions(n_boot=100)
    return build_report(
        tables, ["bert"], out, options, workers=1, cache=cache, png=png, all_figures=True
    )


def test_svg_only_by_default_png_on_request(tmp_path: Path) -> None:
    tables = read_round(_round(tmp_path))
    plain = _report(tables, tmp_path / "plain", None).parent
    assert list(plain.glob("*.svg")) and not list(plain.glob("*.png"))
    with_png = _report(tables, tmp_path / "png", None, png=True).parent
    assert {p.stem for p in with_png.glob("*.png")} == {p.stem for p in plain.glob("*.svg")}


def test_a_second_report_reuses_the_drawings_and_analyses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tables = read_round(_round(tmp_path))
    cache = tmp_path / "cache"
    first = _report(tables, tmp_path / "one", cache)
    assert len(list(cache.glob("*.pickle"))) > 5

    def never(*_args, **_kwargs):
        raise AssertionError("drawn or analysed again although cached")

    # every part of the analysis and of the words the page says, not only the figures
    for name in ("workload_table", "finish_workload"):
        monkeypatch.setattr(analysed_module, name, never)
    for name in ("workload_findings", "answer_rows", "study_section"):
        monkeypatch.setattr(html_module, name, never)
    monkeypatch.setattr(figures_module, "FIGURES", dict.fromkeys(figures_module.FIGURES, never))
    monkeypatch.setattr(figures_module, "overview", never)
    second = _report(tables, tmp_path / "two", cache)
    assert _page(second) == _page(first)
    assert sorted(p.name for p in second.parent.iterdir()) == sorted(
        p.name for p in first.parent.iterdir()
    )


def test_a_report_whose_figures_are_all_cached_never_imports_matplotlib(tmp_path: Path) -> None:
    """matplotlib (~0.6 CPU-s to import) is for drawing: a second report of the same data
    and code takes every figure from the cache and does not import it."""
    folder, cache = _round(tmp_path), tmp_path / "cache"
    code = (
        "import sys; from pathlib import Path; "
        "from gpuscale.analysis import AnalysisOptions; "
        "from gpuscale.mlperf.ingest import read_round; "
        "from gpuscale.report.html import build_report; "
        f"build_report(read_round(Path({str(folder)!r})), ['bert'], Path(sys.argv[1]), "
        f"AnalysisOptions(n_boot=100), workers=1, cache=Path({str(cache)!r})); "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'matplotlib'}))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    said = []
    for out in ("one", "two"):
        done = subprocess.run(
            [sys.executable, "-c", code, str(tmp_path / out)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        said.append(done.stdout.strip())
    assert said == ["['matplotlib']", "[]"]


def test_other_data_is_never_served_from_the_cache(tmp_path: Path) -> None:
    """A changed time to train (and so every figure and number) misses the cache: the
    page is the one drawn without any cache."""
    cache = tmp_path / "cache"
    _report(read_round(_round(tmp_path)), tmp_path / "one", cache)
    changed = read_round(_round(tmp_path, slow_minutes=60.0))
    cached = _report(changed, tmp_path / "two", cache)
    fresh = _report(changed, tmp_path / "three", None)
    assert _page(cached) == _page(fresh)
    assert _page(cached) != _page(tmp_path / "one" / "index.html")


def test_a_damaged_or_unwritable_cache_is_no_cache(tmp_path: Path) -> None:
    tables = read_round(_round(tmp_path))
    cache = tmp_path / "cache"
    fresh = _report(tables, tmp_path / "fresh", None)
    _report(tables, tmp_path / "one", cache)
    for entry in cache.glob("*.pickle"):
        entry.write_bytes(b"not a pickle")
    assert _page(_report(tables, tmp_path / "two", cache)) == _page(fresh)
    blocked = tmp_path / "file"
    blocked.write_text("a file where the cache folder would be")
    assert _page(_report(tables, tmp_path / "three", blocked)) == _page(fresh)
    assert Cache(blocked).get(Cache(blocked).key("x")) is None


def test_a_cache_folder_this_user_cannot_enter_is_no_cache(tmp_path: Path, unenterable) -> None:
    """A cache folder another user made (a shared XDG_CACHE_HOME, one made under sudo)
    ended the report in "cannot write OUT: no permission to write there", the output
    blamed for the cache's refusal; the report is drawn as without a cache."""
    tables = read_round(_round(tmp_path))
    cache = tmp_path / "cache"
    _report(tables, tmp_path / "one", cache)
    unenterable(cache)
    assert not Cache(cache).has(Cache(cache).key("x"))
    page = _report(tables, tmp_path / "two", cache)
    assert _page(page) == _page(_report(tables, tmp_path / "fresh", None))


def test_cli_report_caches_and_takes_no_cache_and_png(tmp_path: Path) -> None:
    root = _round(tmp_path)
    runner = CliRunner()
    for args in ([], [], ["--no-cache", "--png"]):
        out = tmp_path / f"r{len(args)}"
        result = runner.invoke(app, ["report", str(root), "--out", str(out), *args])
        assert result.exit_code == 0, result.output
    assert list((tmp_path / "r2").glob("*.png")) and not list((tmp_path / "r0").glob("*.png"))


def test_without_a_folder_or_a_key_nothing_is_looked_up(tmp_path: Path) -> None:
    """No folder: no key (nothing pickled) and every get a miss; an empty key is a miss in
    any folder (never a file named ``.pickle``)."""
    assert Cache().key("tables", [1, 2]) == ""
    assert Cache().get("") is None
    (tmp_path / ".pickle").write_bytes(b"")
    assert Cache(tmp_path).get("") is None
    assert len(Cache(tmp_path).key("tables", [1, 2])) == 64


def test_a_killed_writers_partial_entry_is_removed_once_stale(tmp_path: Path) -> None:
    """A writer killed (SIGKILL) between writing its ``.tmp`` and renaming it leaves the
    file; a later write removes it once untouched for STALE_TMP_S, and never a younger
    one (a live writer's)."""
    from gpuscale.sources.disk_cache import STALE_TMP_S

    stall = (
        "import os, sys, time\n"
        "from pathlib import Path\n"
        "from gpuscale.sources.disk_cache import Cache\n"
        "os.replace = lambda *a: (print('written', flush=True), time.sleep(60))\n"
        "Cache(Path(sys.argv[1])).put('killed', list(range(1000)))\n"
    )
    folder = tmp_path / "cache"
    writer = subprocess.Popen(
        [sys.executable, "-c", stall, str(folder)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert writer.stdout is not None and writer.stdout.readline() == "written\n"
    finally:
        writer.kill()  # SIGKILL: no handler of the writer runs
        writer.wait()
    (left,) = folder.glob("*.tmp")
    cache = Cache(folder)
    cache.put("a", 1)
    assert left.exists()  # young: it may be a live writer's
    old = left.stat().st_mtime - STALE_TMP_S - 60
    os.utime(left, (old, old))
    young = folder / "live-writer.tmp"
    young.write_bytes(b"partial")
    cache.put("b", 2)
    assert not left.exists() and young.exists()
    assert (cache.get("a"), cache.get("b")) == (1, 2)
