"""Reading fast: trees and archives in place, and work spread over processes.

The one interface the rest of gpuscale uses: :func:`iter_source` (a directory or archive
as :class:`Entry` objects chosen by a :class:`Layout`), :func:`read_tar_xz_blocks` (an
indexed ``.tar.xz`` read by several processes at once), :func:`parallel_map` and
:func:`write_atomically`. Nothing here knows about MLPerf.
"""

from gpuscale._io.atomic import OutputError, write_atomically
from gpuscale._io.parallel import parallel_map
from gpuscale._io.sources import (
    Entry,
    Layout,
    Skipped,
    SourceError,
    is_archive,
    iter_source,
    printable,
    read_ahead,
)
from gpuscale._io.tarblocks import read_tar_xz_blocks

__all__ = [
    "Entry",
    "Layout",
    "OutputError",
    "Skipped",
    "SourceError",
    "is_archive",
    "iter_source",
    "parallel_map",
    "printable",
    "read_ahead",
    "read_tar_xz_blocks",
    "write_atomically",
]
