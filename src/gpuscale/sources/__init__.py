"""Reading fast: trees and archives in place, and outputs written atomically.

The one interface the rest of gpuscale uses: :func:`iter_source` (a directory or archive
as :class:`Entry` objects chosen by a :class:`Layout`, within a :class:`Budget` of
expanded bytes) and :func:`write_atomically`. Nothing here knows about MLPerf.
Modules, lowest first: ``entries`` (the types), ``directories`` and ``archives`` (the two
kinds of source), ``tree`` (either), ``atomic`` (outputs; why one cannot be written is
``gpuscale.tables.writable``'s, said alike by every command).
"""

from gpuscale.sources.archives import top_folder
from gpuscale.sources.atomic import OutputError, check_owner, write_atomically
from gpuscale.sources.entries import (
    MAX_FILE_BYTES,
    MAX_ROUND_BYTES,
    Budget,
    Entry,
    Layout,
    RoundNotSaidError,
    Skipped,
    SourceError,
    is_archive,
    printable,
)
from gpuscale.sources.tree import iter_source, not_a_source, read_ahead
from gpuscale.tables.raw_rounds import ARCHIVE_SUFFIXES  # the kinds every reader takes

__all__ = [
    "ARCHIVE_SUFFIXES",
    "MAX_FILE_BYTES",
    "MAX_ROUND_BYTES",
    "Budget",
    "Entry",
    "Layout",
    "OutputError",
    "RoundNotSaidError",
    "Skipped",
    "SourceError",
    "check_owner",
    "is_archive",
    "iter_source",
    "not_a_source",
    "printable",
    "read_ahead",
    "top_folder",
    "write_atomically",
]
