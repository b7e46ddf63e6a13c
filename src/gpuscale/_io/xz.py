"""Random access into multi-block ``.xz`` files, so that blocks decompress in parallel.

``xz -T`` (and most archivers since xz 5.2) cut the stream into independent blocks,
each with its compressed and uncompressed size in the stream's index at the end of the
file (format: https://tukaani.org/xz/xz-file-format.txt). :func:`read_index` parses that
index; :class:`BlockReader` reads the uncompressed stream from any offset, decompressing
only from the block that holds it, through Python's ``lzma`` (liblzma checks each
block's CRC as it finishes it). Only single-stream files are handled; anything else
gives ``None`` and the caller reads the file sequentially.
"""

from __future__ import annotations

import io
import lzma
import struct
import zlib
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path

_HEADER_MAGIC = b"\xfd7zXZ\x00"
_FOOTER_MAGIC = b"YZ"
_CHUNK = 1 << 20  # bytes of output decompressed at a time


@dataclass(frozen=True, slots=True)
class Block:
    """One xz block: where it lies in the file and in the uncompressed stream (bytes)."""

    file_offset: int
    file_size: int  # header + data + padding + check
    start: int  # uncompressed offset
    size: int  # uncompressed size

    @property
    def end(self) -> int:
        return self.start + self.size


@dataclass(frozen=True, slots=True)
class XzIndex:
    """The blocks of a single-stream ``.xz`` file and its 12-byte stream header."""

    stream_header: bytes
    blocks: tuple[Block, ...]

    @property
    def size(self) -> int:
        return self.blocks[-1].end if self.blocks else 0

    def block_at(self, offset: int) -> int:
        """The number of the block holding uncompressed ``offset``."""
        return max(0, bisect_right([b.start for b in self.blocks], offset) - 1)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """An xz multibyte integer (7 bits per byte, low first) at ``pos``: (value, next pos)."""
    value = 0
    for i in range(9):
        byte = data[pos + i]
        value |= (byte & 0x7F) << (7 * i)
        if not byte & 0x80:
            return value, pos + i + 1
    raise ValueError("multibyte integer longer than 9 bytes")


def read_index(path: str | Path) -> XzIndex | None:
    """The block index of a single-stream ``.xz`` file, or None when the file is not one
    (another format, several streams, stream padding, a damaged index)."""
    try:
        with open(path, "rb") as f:
            header = f.read(12)
            f.seek(0, io.SEEK_END)
            file_size = f.tell()
            if file_size < 24 or not header.startswith(_HEADER_MAGIC):
                return None
            f.seek(file_size - 12)
            footer = f.read(12)
            if footer[10:] != _FOOTER_MAGIC or footer[8:10] != header[6:8]:
                return None
            index_size = (struct.unpack("<I", footer[4:8])[0] + 1) * 4
            index_start = file_size - 12 - index_size
            if index_start < 12:
                return None
            f.seek(index_start)
            index = f.read(index_size)
    except OSError:
        return None
    if index[0] != 0 or zlib.crc32(index[:-4]) != struct.unpack("<I", index[-4:])[0]:
        return None
    try:
        count, pos = _varint(index, 1)
        blocks: list[Block] = []
        file_offset, start = 12, 0
        for _ in range(count):
            unpadded, pos = _varint(index, pos)
            size, pos = _varint(index, pos)
            on_disk = (unpadded + 3) // 4 * 4
            blocks.append(Block(file_offset, on_disk, start, size))
            file_offset += on_disk
            start += size
    except (IndexError, ValueError):
        return None
    if file_offset != index_start:  # more than one stream, or padding: not handled here
        return None
    return XzIndex(stream_header=header, blocks=tuple(blocks))


class BlockReader(io.RawIOBase):
    """The uncompressed stream of an indexed ``.xz`` file from offset ``start`` on.

    Reads forward only (a backward seek raises ``io.UnsupportedOperation``); holds one
    block's compressed bytes and up to about 1 MiB of output at a time.
    """

    def __init__(self, path: str | Path, index: XzIndex, start: int = 0) -> None:
        super().__init__()
        self._file = open(path, "rb")  # noqa: SIM115 (closed in close())
        self._index = index
        self._block = index.block_at(start)
        self._pos = index.blocks[self._block].start if index.blocks else 0
        self._buf = b""
        self._off = 0
        self._left = 0  # output bytes the current block still has to give
        self._decoder = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
        self._input = b""
        if index.blocks:
            self._start_block()
        self.seek(start)

    def _start_block(self) -> None:
        block = self._index.blocks[self._block]
        self._file.seek(block.file_offset)
        # The stream header, then the block: liblzma decodes it as the start of a stream.
        self._input = self._index.stream_header + self._file.read(block.file_size)
        self._decoder = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)
        self._left = block.size

    def _chunk(self) -> bytes:
        """The next up to 1 MiB of output; empty at the end of the stream."""
        while self._left == 0:
            if self._block + 1 >= len(self._index.blocks):
                return b""
            self._block += 1
            self._start_block()
        chunk = self._decoder.decompress(self._input, max_length=min(_CHUNK, self._left))
        self._input = b""
        if not chunk:
            raise lzma.LZMAError("xz block ends before its indexed size")
        self._left -= len(chunk)
        return chunk

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def read(self, size: int | None = -1) -> bytes:
        if size is None or size < 0:
            size = 1 << 62
        end = self._off + size
        if end <= len(self._buf):  # the common case: a slice of the current chunk
            data = self._buf[self._off : end]
            self._off = end
        else:  # the rest of this chunk and whole chunks, joined once
            parts = [self._buf[self._off :]]
            need = size - len(parts[0])
            self._buf, self._off = b"", 0
            while need > 0 and (chunk := self._chunk()):
                if len(chunk) <= need:
                    parts.append(chunk)
                    need -= len(chunk)
                else:
                    parts.append(chunk[:need])
                    self._buf, self._off, need = chunk, need, 0
            data = b"".join(parts)
        self._pos += len(data)
        return data

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        target = offset if whence == io.SEEK_SET else self._pos + offset
        if whence not in (io.SEEK_SET, io.SEEK_CUR) or target < self._pos:
            raise io.UnsupportedOperation("BlockReader reads forward only")
        while self._pos < target and self.read(min(_CHUNK, target - self._pos)):
            pass
        return self._pos

    def unread(self, data: bytes) -> None:
        """Put back the bytes just read, so that the next read returns them again."""
        self._buf = data + self._buf[self._off :]
        self._off = 0
        self._pos -= len(data)

    def close(self) -> None:
        self._file.close()
        super().close()
