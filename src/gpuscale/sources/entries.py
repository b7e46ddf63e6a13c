"""What a source is made of: :class:`Entry` (a member and how to read it), the
:class:`Layout` that picks members, :class:`Skipped` notes, the :class:`Budget` of expanded
bytes, and the name checks directories and archives share. Nothing here raises on what is
inside a source; only a path that is not a source at all raises :class:`SourceError`.
"""

from __future__ import annotations

import lzma
import os
import re
import tarfile
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from gpuscale.quantities import printable as text_printable
from gpuscale.tables import ProblemKind
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.raw_rounds import is_archive
from gpuscale.tables.requests import NamedError, ref

# What reading a damaged archive member or stream can raise.
ARCHIVE_ERRORS = (
    tarfile.TarError,
    zipfile.BadZipFile,
    OSError,
    EOFError,
    ValueError,
    lzma.LZMAError,
    zlib.error,
    RuntimeError,  # zipfile: an encrypted member
    NotImplementedError,  # zipfile: an unsupported compression method
)


class SourceError(Exception):
    """A path that cannot be read as a tree at all (missing, not a directory or archive)."""


class RoundNotSaidError(SourceError, NamedError):
    """A path whose name says no round, told to give it: its sentence names the field
    (:func:`gpuscale.tables.requests.ref`), ``round_name='v5.0'`` from Python and the
    option (``--round v5.0``) on the command line, ``example`` the round given (the
    reader's choice: the newest it ships). ``said``: what its logs say of the round, to
    follow the name's clause, naming the field the same way (the reader of the logs says
    it; without: ``example`` as the round to give); ``evidence`` the record it renders."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        example: str,
        said: str | None = None,
        evidence: object = None,
    ) -> None:
        said = said or f"; give it, e.g. {ref('round_name', example)}"
        NamedError.__init__(self, f"{quoted_path(path)}: cannot tell the round from the name{said}")
        self.path, self.example, self.evidence = path, example, evidence


@dataclass(frozen=True, slots=True)
class Layout:
    """Which members a reader wants: ``wanted(rel)`` for files, ``marked(rel)`` for
    folders to report even when empty, ``misplaced(rel, is_dir)`` a message for a member
    of the wrong kind (a file where a folder belongs), ``top`` a leading folder name
    pattern to strip (``training_results_v4.1``) and ``unread(rel)`` a message for a file
    not wanted whose name says it is one of those read (a run log misnamed or misplaced).
    Functions must be module-level (they may travel to worker processes)."""

    wanted: Callable[[str], bool]
    marked: Callable[[str], bool]
    misplaced: Callable[[str, bool], str | None]
    top: re.Pattern[str] | None = None
    unread: Callable[[str], str | None] | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    """A member: ``path`` is relative to the tree's top folder, '/'-separated."""

    path: str
    size: int  # bytes, where known (0 for directory sources: not worth a stat call)
    read: Callable[[], bytes]
    file: str | None = None  # the file on disk, for directory sources
    is_dir: bool = False  # a folder the layout marks (may be empty)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A member that was not read (or, ``was_read``, read under an escaped name), and
    why; ``ends_read``: nothing after it was read (a damaged archive, a bomb)."""

    path: str
    kind: ProblemKind
    message: str
    ends_read: bool = False
    was_read: bool = False  # a note on a member read all the same (its name escaped)


# Caps on what one source may expand to: 16x the largest real result file (3.8 MB,
# v1.1) and 16x the largest real round (608 MB unpacked, v4.0).
MAX_FILE_BYTES = 64 << 20
MAX_ROUND_BYTES = 10 << 30


@dataclass(slots=True)
class Budget:
    """The bytes a source may expand to: ``file_bytes`` per member, ``round_bytes`` in
    all (members too large to read count too: a bomb is still decompressed to be
    skipped)."""

    file_bytes: int = MAX_FILE_BYTES
    round_bytes: int = MAX_ROUND_BYTES
    spent: int = 0

    def take(
        self, rel: str, size: int, skipped: list[Skipped], where: str, wanted: bool = True
    ) -> bool:
        """Whether a wanted member of ``size`` bytes may be read; else why not, in
        ``skipped`` (an unwanted one: False, silently).
        Raises :class:`BudgetSpent` when the source as a whole is past its cap."""
        self.spent += size
        if self.spent > self.round_bytes:
            raise BudgetSpent(
                Skipped(
                    where,
                    ProblemKind.UNREADABLE,
                    f"expands past the cap of {self.round_bytes:,} bytes at {printable(rel)} "
                    "(a bomb?); what came before was read, nothing after it (a larger "
                    "round: gpuscale.mlperf.read_round(path, max_round_bytes=N) in Python)",
                    ends_read=True,
                )
            )
        if not wanted:
            return False
        if size > self.file_bytes:
            skipped.append(
                Skipped(
                    printable(rel),
                    ProblemKind.UNREADABLE,
                    f"{size:,} bytes, more than the cap of {self.file_bytes:,} per file; not "
                    "read (a larger file: gpuscale.mlperf.read_round(path, max_file_bytes=N) "
                    "in Python)",
                )
            )
            return False
        return True


class BudgetSpent(Exception):
    """A source expanded past its cap: reading it ends with this note."""

    def __init__(self, note: Skipped) -> None:
        super().__init__(note.message)
        self.note = note


@dataclass(frozen=True, slots=True)
class Reading:
    """What one reading of a source carries through it, whichever kind of source: the
    ``layout`` that picks the members, the ``skipped`` notes it adds to and the ``budget``
    of expanded bytes it spends. Each reader (a directory's, an archive's) takes it whole."""

    layout: Layout
    skipped: list[Skipped]
    budget: Budget


def printable(name: str) -> str:
    """A path as text that any table, file or terminal can hold: bytes that were not
    UTF-8 (kept as surrogates by ``os`` and ``tarfile``) become ``\\xNN`` escapes, and
    so do control characters (:func:`gpuscale.quantities.printable`)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        name = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return text_printable(name)


def clean_name(rel: str, skipped: list[Skipped]) -> str:
    clean = printable(rel)
    if clean != rel:
        skipped.append(
            Skipped(
                clean,
                ProblemKind.BAD_FIELD,
                "file name is not UTF-8; read under this escaped name",
                was_read=True,
            )
        )
    return clean


def member_kind(is_dir: bool, is_file: bool = True) -> str:
    """A member's kind as :func:`skip_misfit` takes it: ``dir``, ``file`` or ``other`` (a
    FIFO, socket, device or link)."""
    if is_dir:
        return "dir"
    if is_file:
        return "file"
    return "other"


def shape_problem(rel: str, kind: str, wanted: bool) -> str | None:
    """Why a member of this kind (``file``, ``dir`` or ``other``) is not read, or None."""
    if wanted and kind == "dir":
        return "a folder where a file belongs; not read"
    if wanted and kind == "other":
        return "not a regular file (a FIFO, socket, device or link); not read"
    if kind == "file" and is_archive(rel):
        return "an archive inside the round; not read (give it as a path of its own)"
    return None


def skip_misfit(rel: str, kind: str, layout: Layout, skipped: list[Skipped]) -> bool:
    """Whether a member of ``kind`` (``file``, ``dir`` or ``other``) is of the wrong kind
    for its place (``layout.misplaced``) or for being read (:func:`shape_problem`); if so,
    its note is added to ``skipped``."""
    problem = layout.misplaced(rel, kind == "dir") or shape_problem(rel, kind, layout.wanted(rel))
    if problem:
        skipped.append(Skipped(printable(rel), ProblemKind.NOT_A_FILE, problem))
    return problem is not None


def note_unread(rel: str, layout: Layout, skipped: list[Skipped]) -> None:
    """Adds to ``skipped`` an ``unread log`` note for a file the layout does not read
    though its name says it is one of those it reads (``layout.unread``)."""
    if layout.unread is not None and not layout.wanted(rel) and (said := layout.unread(rel)):
        skipped.append(Skipped(printable(rel), ProblemKind.UNREAD_LOG, said))
