"""A raw round read once is kept in the user's cache (``$XDG_CACHE_HOME/gpuscale/tables``):
the same source read again gives the same tables without parsing a log, and a changed file,
another round name or an unwritable cache folder reads it afresh."""

from __future__ import annotations

import errno
import os
import struct
from pathlib import Path

import pytest

import gpuscale
from gpuscale.mlperf import load
from gpuscale.mlperf.load import read_paths
from gpuscale.mlperf.no_results import NoResultsError
from gpuscale.sources import disk_cache
from gpuscale.sources.disk_cache import SOURCES, Cache, default_folder, fingerprint_of
from gpuscale.tables import RoundTables

from .logbuilder import RoundBuilder

TEN = [100.0 + i for i in range(10)]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[Path]:
    """The paths ``read_round`` parsed, in a cache folder of this test's own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    parsed: list[Path] = []
    real = load.read_round

    def read_round(path: Path, name: str | None, **kwargs: object) -> RoundTables:
        parsed.append(path)
        return real(path, name, **kwargs)

    monkeypatch.setattr(load, "read_round", read_round)
    return parsed


def _round(minutes: list[float]) -> RoundBuilder:
    return (
        RoundBuilder(name="training_results_v4.1")
        .system("Acme", "box8")
        .runs("Acme", "box8", "bert", minutes)
    )


def _same(a: RoundTables, b: RoundTables) -> None:
    for table in ("scores", "runs", "systems", "problems"):
        assert getattr(a, table).equals(getattr(b, table)), table


@pytest.mark.parametrize("kind", ["tar", "folder"])
def test_a_second_read_is_the_first_without_parsing(reads, tmp_path: Path, kind: str) -> None:
    built = _round(TEN)
    source = built.write_tar(tmp_path) if kind == "tar" else built.write_dir(tmp_path)
    first = read_paths([source])
    second = read_paths([source])
    assert reads == [source]  # parsed once
    _same(first, second)
    assert len(list((tmp_path / "cache" / "gpuscale" / "tables").glob("*.pickle"))) == 1


def test_a_changed_file_or_round_name_reads_afresh(reads, tmp_path: Path) -> None:
    folder = _round(TEN).write_dir(tmp_path)
    before = read_paths([folder])
    # one run's log rewritten: the folder's identity (a file's size and time) changes
    log = "Acme/results/box8/bert/result_0.txt"
    (folder / log).write_bytes(_round([50.0] * 10).files[log])
    after = read_paths([folder])
    assert len(reads) == 2
    assert not before.runs["time_to_train_min"].equals(after.runs["time_to_train_min"])
    read_paths([folder], ["v4.0"])  # another round name: another key
    assert len(reads) == 3
    read_paths([folder], ["4.1"])  # the round its name says, given: the entry read unnamed
    assert len(reads) == 3


def test_an_unwritable_cache_is_no_cache(reads, tmp_path: Path) -> None:
    (tmp_path / "cache").write_text("a file where the folder goes")
    archive = _round(TEN).write_tar(tmp_path)
    first, second = read_paths([archive]), read_paths([archive])
    assert len(reads) == 2  # read each time, never refused
    _same(first, second)


def test_a_damaged_entry_is_read_afresh(reads, tmp_path: Path) -> None:
    archive = _round(TEN).write_tar(tmp_path)
    first = read_paths([archive])
    (entry,) = (tmp_path / "cache" / "gpuscale" / "tables").glob("*.pickle")
    entry.write_bytes(b"not a pickle")
    again = read_paths([archive])
    assert len(reads) == 2
    _same(first, again)
    os.utime(archive)  # a new modification time: a new key, whatever the bytes
    read_paths([archive])
    assert len(reads) == 3


def test_the_path_as_given_names_the_problems(reads, tmp_path: Path) -> None:
    # a damaged archive's problem names the archive as given: a link to it under another
    # name is read as itself, not as the copy read first
    whole = _round(TEN).runs("Acme", "box8", "resnet", TEN[:5]).write_tar(tmp_path)
    damaged = tmp_path / "cut.tar.xz"
    damaged.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    link = tmp_path / "other.tar.xz"
    link.symlink_to(damaged)
    first = read_paths([damaged], ["v4.1"])
    second = read_paths([link], ["v4.1"])
    assert len(reads) == 2
    # the archive's own problem (what else was read before the cut depends on its bytes)
    damage = [t.problems[t.problems["kind"] == "corrupt archive"] for t in (first, second)]
    assert list(damage[0]["path"]) == ["cut.tar.xz"]
    assert list(damage[1]["path"]) == ["other.tar.xz"]
    assert read_paths([link], ["v4.1"]).problems.equals(second.problems)
    assert len(reads) == 2  # the link read again: from the cache


def test_a_folder_that_is_no_round_is_refused_before_its_tree_is_listed(
    reads, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed: list[Path] = []
    monkeypatch.setattr(load, "source_identity", lambda p: listed.append(p))
    home = tmp_path / "home"
    (home / "photos").mkdir(parents=True)
    (home / "photos" / "a.jpg").write_bytes(b"x")
    with pytest.raises(NoResultsError, match="no MLPerf results"):
        read_paths([home])
    assert listed == [] and reads == []


def test_the_key_covers_the_packages_data(tmp_path: Path) -> None:
    # a round's tables depend on the data (the accelerator catalogue names families): a
    # changed data file is a changed fingerprint, never a stale cached round
    (tmp_path / "data").mkdir()
    (tmp_path / "read.py").write_text("x = 1\n")
    catalogue = tmp_path / "data" / "accelerator_products.csv"
    catalogue.write_text("pattern,product\n\\bb200,B200\n")
    before = fingerprint_of(tmp_path)
    catalogue.write_text("pattern,product\n\\bb200,Blackwell\n")
    assert fingerprint_of(tmp_path) != before
    data = Path(gpuscale.__file__).parent / "data"
    assert {p.suffix for p in data.iterdir() if p.is_file()} <= set(SOURCES)


def test_an_interrupted_write_leaves_no_file(tmp_path: Path) -> None:
    class Interrupted:
        def __reduce__(self) -> tuple:
            raise KeyboardInterrupt

    cache = Cache(tmp_path / "tables")
    with pytest.raises(KeyboardInterrupt):
        cache.put(cache.key("x"), Interrupted())
    assert list((tmp_path / "tables").iterdir()) == []


def test_a_flipped_bit_is_a_miss_not_a_wrong_number(tmp_path: Path) -> None:
    # a damaged disk block may still unpickle: the value stored is checked, not trusted
    cache = Cache(tmp_path / "tables")
    key = cache.key("minutes")
    cache.put(key, [5.116225, 3.619344])
    entry = tmp_path / "tables" / f"{key}.pickle"
    stored = bytearray(entry.read_bytes())
    at = stored.index(struct.pack(">d", 5.116225))  # the first float, as pickle writes it
    stored[at] ^= 0x01
    entry.write_bytes(bytes(stored))
    assert cache.get(key) is None
    cache.put(key, [5.116225, 3.619344])  # computed again, stored again
    assert cache.get(key) == [5.116225, 3.619344]


def test_a_write_a_full_disk_refuses_at_close_leaves_no_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # a small entry sits in the file's buffer until it is closed: ENOSPC comes then
    class RefusedAtClose:
        def __init__(self, fd: int, mode: str) -> None:
            self.file = open(fd, mode)  # noqa: SIM115 (closed, then refused, by __exit__)

        def write(self, data: bytes) -> int:
            return self.file.write(data)

        def __enter__(self) -> RefusedAtClose:
            return self

        def __exit__(self, *exc: object) -> None:
            self.file.close()
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(disk_cache, "open", RefusedAtClose, raising=False)
    cache = Cache(tmp_path / "tables")
    cache.put(cache.key("x"), "x")  # no cache, never an error
    assert list((tmp_path / "tables").iterdir()) == []
    assert cache.get(cache.key("x")) is None


def test_a_folder_holding_a_dangling_link_is_kept(reads, tmp_path: Path) -> None:
    # a link that leads nowhere is a problem the reader reports, not a folder never cached
    folder = _round(TEN).write_dir(tmp_path)
    log = "Acme/results/box8/bert/result_9.txt"
    kept = folder / "Acme" / "kept_9.txt"
    (folder / log).unlink()
    (folder / log).symlink_to(kept)
    first, second = read_paths([folder]), read_paths([folder])
    assert len(reads) == 1
    _same(first, second)
    assert "not a regular file" in " ".join(first.problems["message"])
    kept.write_bytes(_round(TEN).files[log])  # the link now leads to the log: read afresh
    found = read_paths([folder])
    assert len(reads) == 2
    assert "not a regular file" not in " ".join(found.problems["message"])


def test_the_key_covers_the_rules_library(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # mlperf-logging's rules check and score every run: a newer one is a new fingerprint
    (tmp_path / "read.py").write_text("x = 1\n")
    monkeypatch.setattr(disk_cache, "version", lambda name: "4.1.68")
    before = fingerprint_of(tmp_path)
    monkeypatch.setattr(
        disk_cache, "version", lambda name: "5.0.1" if name == "mlperf-logging" else "4.1.68"
    )
    assert fingerprint_of(tmp_path) != before


def test_a_relative_cache_home_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # "~/.cache" unexpanded: no folder named ~ in the folder the command ran in
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CACHE_HOME", "~/.cache")
    assert default_folder("tables") == tmp_path / "home" / ".cache" / "gpuscale" / "tables"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "mine"))
    assert default_folder("tables") == tmp_path / "mine" / "gpuscale" / "tables"


def test_the_entry_read_last_is_kept_longest(tmp_path: Path) -> None:
    # four kept at most: the first written, read since, outlives those written after it
    cache = Cache(tmp_path / "tables", most=4)
    keys = [cache.key(n) for n in "abcd"]
    for when, key in enumerate(keys, start=1):
        cache.put(key, key)
        os.utime(tmp_path / "tables" / f"{key}.pickle", (when, when))
    assert cache.get(keys[0]) == keys[0]
    cache.put(cache.key("e"), "e")  # five: trimmed to three, the least recently used gone
    assert [cache.has(k) for k in keys] == [True, False, False, True]
