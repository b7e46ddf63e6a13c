"""Multi-block .xz: the index, the block reader, and reading a .tar.xz block by block."""

from __future__ import annotations

import io
import lzma
import shutil
import subprocess
import tarfile
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuscale._io import SourceError, read_tar_xz_blocks
from gpuscale._io.xz import BlockReader, read_index
from gpuscale.mlperf.ingest import read_round
from gpuscale.mlperf.layout import MLPERF_LAYOUT

from ..mlperf.logbuilder import RoundBuilder

XZ = shutil.which("xz")
needs_xz = pytest.mark.skipif(XZ is None, reason="the xz program makes the multi-block files")


def xz_blocks(data: bytes, path: Path, block_size: int = 8192) -> Path:
    """``data`` compressed by ``xz`` into independent blocks of ``block_size`` bytes."""
    out = subprocess.run(
        [XZ, "-z", "-c", "-T1", f"--block-size={block_size}"], input=data, capture_output=True
    )
    path.write_bytes(out.stdout)
    return path


def round_with_big_files() -> RoundBuilder:
    rb = RoundBuilder()
    rb.system("Acme", "box8").runs("Acme", "box8", "bert", [10, 12, 11, 13, 9, 10, 11, 12, 10, 11])
    rb.system("Acme", "box16", nodes="2").runs("Acme", "box16", "ssd", [6, 5, 7, 6, 6])
    return rb


def tar_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[bytes, Path]:
    data = bytes(range(256)) * 400 + b"tail" * 3000
    return data, xz_blocks(data, tmp_path_factory.mktemp("xz") / "sample.xz", 4096)


@needs_xz
def test_index_lists_the_blocks(sample: tuple[bytes, Path]) -> None:
    data, path = sample
    index = read_index(path)
    assert index is not None and len(index.blocks) == -(-len(data) // 4096)
    assert index.size == len(data)
    assert [b.start for b in index.blocks] == list(range(0, len(data), 4096))
    assert index.block_at(0) == 0 and index.block_at(4096) == 1 and index.block_at(4095) == 0


@needs_xz
@settings(max_examples=60, deadline=None)
@given(st.data())
def test_reader_gives_the_stream_from_any_offset(sample: tuple[bytes, Path], data) -> None:
    raw, path = sample
    index = read_index(path)
    start = data.draw(st.integers(0, len(raw)))
    with BlockReader(path, index, start) as reader:
        assert reader.tell() == start
        pos = start
        for size in data.draw(st.lists(st.integers(0, 9000), max_size=6)):
            assert reader.read(size) == raw[pos : pos + size]
            pos = min(len(raw), pos + size)
            assert reader.tell() == pos
        skip = data.draw(st.integers(0, 20000))
        reader.seek(pos + skip)
        assert reader.read(100) == raw[pos + skip : pos + skip + 100]
        with pytest.raises(io.UnsupportedOperation):  # forward only
            reader.seek(-1, io.SEEK_CUR)


def test_index_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    one = lzma.compress(b"x" * 1000)
    (tmp_path / "two_streams.xz").write_bytes(one + one)
    (tmp_path / "not_xz.xz").write_bytes(b"plain text, not xz at all")
    (tmp_path / "cut.xz").write_bytes(one[:-5])
    bad_crc = bytearray(one)
    bad_crc[-13] ^= 0xFF  # inside the index's CRC32
    (tmp_path / "bad_crc.xz").write_bytes(bytes(bad_crc))
    for name in ("two_streams.xz", "not_xz.xz", "cut.xz", "bad_crc.xz", "missing.xz"):
        assert read_index(tmp_path / name) is None, name
    single = tmp_path / "single.xz"
    single.write_bytes(one)
    index = read_index(single)
    assert index is not None and len(index.blocks) == 1 and index.size == 1000


@needs_xz
def test_corrupt_block_raises_lzma_error(tmp_path: Path) -> None:
    data = bytes(range(256)) * 200
    path = xz_blocks(data, tmp_path / "c.xz", 8192)
    index = read_index(path)
    blob = bytearray(path.read_bytes())
    blob[index.blocks[1].file_offset + 30] ^= 0x55
    path.write_bytes(bytes(blob))
    with pytest.raises(lzma.LZMAError), BlockReader(path, index, 0) as reader:
        reader.read()


def _path_only(entry) -> str:
    return entry.path


def _same_tables(a, b) -> None:
    for name in ("systems", "runs", "scores", "problems"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))


@needs_xz
@pytest.mark.parametrize("block_size", [2048, 8192, 65536])
def test_block_read_equals_sequential_read(tmp_path: Path, block_size: int) -> None:
    rb = round_with_big_files()
    members = {f"{rb.name}/{k}": v for k, v in rb.files.items()}
    path = xz_blocks(tar_bytes(members), tmp_path / f"{rb.name}.tar.xz", block_size)
    index = read_index(path)
    assert index is not None and len(index.blocks) >= 2
    assert read_tar_xz_blocks(path, MLPERF_LAYOUT, _path_only, 2) is not None  # chains up
    tables = read_round(path, workers=2)
    _same_tables(tables, read_round(path, workers=1))
    reference = read_round(rb.write_dir(tmp_path / "dir"), workers=1)
    pd.testing.assert_frame_equal(tables.scores, reference.scores)
    pd.testing.assert_frame_equal(tables.runs, reference.runs)


@needs_xz
def test_tar_inside_a_file_falls_back_to_sequential(tmp_path: Path) -> None:
    # A file whose bytes are a tar: its headers look like the outer archive's, so a block
    # that starts inside it finds a false header; the chain check must catch that.
    rb = round_with_big_files()
    inner = tar_bytes({f"x{i}.txt": b"y" * 700 for i in range(40)})
    members = {f"{rb.name}/{k}": v for k, v in rb.files.items()}
    members[f"{rb.name}/Acme/results/box8/bert/notes.tar"] = inner
    path = xz_blocks(tar_bytes(members), tmp_path / f"{rb.name}.tar.xz", 4096)
    assert len(read_index(path).blocks) >= 2
    assert read_tar_xz_blocks(path, MLPERF_LAYOUT, _path_only, 2) is None
    _same_tables(read_round(path, workers=2), read_round(path, workers=1))


@needs_xz
@pytest.mark.parametrize("where", [0.3, 0.9])
def test_corrupt_block_gives_the_sequential_outcome(tmp_path: Path, where: float) -> None:
    rb = round_with_big_files()
    for i in range(30):  # enough data that the damage can lie past the first MiB
        rb.raw(f"Acme/results/box8/bert/notes_{i}.txt", bytes(range(256)) * 200 * (i + 1))
    members = {f"{rb.name}/{k}": v for k, v in rb.files.items()}
    path = xz_blocks(tar_bytes(members), tmp_path / f"{rb.name}.tar.xz", 65536)
    index = read_index(path)
    blob = bytearray(path.read_bytes())
    blob[index.blocks[int(len(index.blocks) * where)].file_offset + 40] ^= 0x55
    path.write_bytes(bytes(blob))

    def outcome(workers: int):
        try:
            return read_round(path, workers=workers)
        except SourceError as exc:
            return str(exc)

    parallel, sequential = outcome(2), outcome(1)
    if isinstance(sequential, str):
        assert parallel == sequential
    else:
        assert "corrupt archive" in set(parallel.problems.kind)
        _same_tables(parallel, sequential)
