"""Reading fast: trees and archives in place, and work spread over processes.

The one interface the rest of gpuscale uses: :func:`iter_source` (a directory or archive
as :class:`Entry` objects chosen by a :class:`Layout`, within a :class:`Budget` of
expanded bytes) and :func:`write_atomically`. Nothing here knows about MLPerf.
"""

from gpuscale._io.atomic import OutputError, write_atomically
from gpuscale._io.sources import (
    Budget,
    Entry,
    Layout,
    Skipped,
    SourceError,
    is_archive,
    iter_source,
    printable,
    read_ahead,
)

__all__ = [
    "Budget",
    "Entry",
    "Layout",
    "OutputError",
    "Skipped",
    "SourceError",
    "is_archive",
    "iter_source",
    "printable",
    "read_ahead",
    "write_atomically",
]
