"""Reading a multi-block ``.tar.xz`` with every worker at once: one task per xz block.

A plain ``.tar.xz`` can only be decompressed front to back, by one core. But the xz
files ``xz -T`` writes are cut into independent blocks (v4.1: eleven of 24 MiB), so
each worker can decompress a block itself and parse the result files whose headers lie
in it (reading on into the next block for the last one). No file's bytes cross between
processes and decompression is shared by the cores.

Where a block starts inside a member, its worker looks for the first tar header; the
walks must then chain up exactly (each block starts at the header where the previous
one stopped, the last reaches the archive's end). Anything else (a header-shaped block
inside a file, a damaged block, pax global headers that change members) returns None
and the caller reads the archive sequentially, so the result never depends on the path
taken.
"""

from __future__ import annotations

import lzma
import tarfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpuscale.mlperf.parse import Parsed, parse_task, task_for
from gpuscale.mlperf.sources import Entry, Skipped, TarBlockBounds, iter_tar_block
from gpuscale.mlperf.team import Team
from gpuscale.mlperf.xz import XzIndex

# Global pax fields that do not change how members are read (GitHub writes a comment).
_HARMLESS_PAX = frozenset({"comment"})


@dataclass(slots=True)
class BlockResult:
    """What one block's worker read: each entry with its parsed row (None for the
    entries the main process handles: systems, scaling factors, folders)."""

    bounds: TarBlockBounds
    items: list[tuple[Entry, Parsed | None]] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    error: str = ""


def read_block(task: tuple[str, XzIndex, int, str]) -> BlockResult:
    """Worker: read and parse the members of one block. Never raises."""
    path, index, number, round_name = task
    result = BlockResult(TarBlockBounds())
    try:
        for entry in iter_tar_block(Path(path), index, number, result.skipped, result.bounds):
            parse = task_for(entry, round_name)
            if parse is None:
                result.items.append((entry, None))
            else:  # parsed here; only the path goes back
                result.items.append((Entry(entry.path, entry.size, bytes), parse_task(parse)))
    except (OSError, EOFError, ValueError, lzma.LZMAError, tarfile.TarError) as exc:
        return BlockResult(result.bounds, error=f"{type(exc).__name__}: {exc}")
    return result


def chained(index: XzIndex, results: list[BlockResult]) -> bool:
    """Whether the blocks' walks read every member exactly once, as a front-to-back
    read would: each starts at the header where the previous stopped, and a block that
    lies wholly inside one member (or after the archive's end) finds no header."""
    expected: int | None = 0
    for block, result in zip(index.blocks, results, strict=True):
        if result.error or set(result.bounds.global_pax) - _HARMLESS_PAX:
            return False
        bounds = result.bounds
        if expected is None or expected >= block.end:  # past the end, or inside a member
            if bounds.first_header is not None:
                return False
        elif bounds.first_header == expected:
            expected = bounds.next_header
        elif bounds.first_header is None and bounds.end_marker == expected:
            expected = None  # the end-of-archive block: tarfile stops there too
        else:
            return False
    return expected is None or expected >= index.size


def read_tar_xz_blocks(
    path: Path,
    index: XzIndex,
    round_name: str,
    workers: int,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[BlockResult], list[str]] | None:
    """Every block of an indexed .tar.xz read by ``workers`` processes, in archive
    order, with the team's notes (dead workers); None when the walks do not chain up
    (then read the archive sequentially). ``progress`` counts blocks."""
    tasks = [(str(path), index, number, round_name) for number in range(len(index.blocks))]
    with Team(read_block, tasks, workers) as team:
        results = team.results(progress)
    return (results, team.notes) if chained(index, results) else None
