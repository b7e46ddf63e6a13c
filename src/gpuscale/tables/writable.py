"""Why an output path cannot be written, in words a user can act on.

Every command that writes (a report, tables, a dataset, bench and collectives results)
says the same thing for the same cause: a file where a folder must be, a folder that does
not exist (and the command that makes it), a folder that takes no new entries (/proc,
/sys), a name longer than the file system allows, no permission, a read-only or full disk,
never the bare ``strerror`` ("No such file or directory" says nothing of which part is
missing, nor of /proc refusing a new entry).
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import tempfile
from pathlib import Path

from gpuscale.tables.commands import quoted_path

NAME_MAX = 255  # bytes in one name on Linux file systems (ext4, xfs, btrfs, tmpfs)
PATH_MAX = 4096  # bytes in a whole path (Linux)


MOUNTS = "/proc/self/mountinfo"  # Linux: one mounted file system a line, its place 5th


def is_mount_point(path: Path, table: str = MOUNTS) -> bool:
    """Whether a file system is mounted at ``path``: ``os.path.ismount``, or a place the
    kernel's ``table`` of mounts lists. A bind mount of a folder of the same disk (a
    container's or a cluster job's volume) has its parent's device, so ``ismount`` says
    no, yet a rename into it from beside it fails (EXDEV, "Invalid cross-device link"):
    an output written beside it and moved in never arrived."""
    if os.path.ismount(path):
        return True
    try:
        with open(table, "rb") as lines:
            listed = {fields[4] for line in lines if len(fields := line.split()) > 4}
    except OSError:  # no such table (not Linux): ismount's answer
        return False
    # the table writes a space, tab, newline or backslash in a place as \040, \011, ...
    places = {re.sub(rb"\\([0-7]{3})", lambda m: bytes([int(m[1], 8)]), p) for p in listed}
    return os.fsencode(os.path.realpath(path)) in places


def existing_ancestor(path: Path) -> Path | None:
    """The deepest ancestor of ``path`` (itself included) that exists; None if none."""
    for candidate in (path, *path.parents):
        try:
            if os.path.lexists(candidate):
                return candidate
        except (OSError, ValueError):  # a name too long to look at: its parent then
            continue
    return None


def why_unwritable(exc: OSError, path: Path) -> str:
    """Why ``path`` (a file or a folder to create or write) could not be written, from the
    ``OSError`` raised doing it: what to change, not only the system's word for it."""
    code = exc.errno
    path = Path(os.path.abspath(path))
    if code == errno.ENAMETOOLONG:
        longest = max((len(os.fsencode(part)) for part in path.parts), default=0)
        if longest > NAME_MAX:
            return (
                f"the name is too long ({longest:,} bytes in one name; file systems allow "
                f"{NAME_MAX})"
            )
        whole = len(os.fsencode(str(path)))
        return f"the path is too long ({whole:,} bytes; file systems allow {PATH_MAX:,})"
    found = existing_ancestor(path)
    on_the_way = found is not None and found != path and not os.path.isdir(found)
    if code in (errno.ENOTDIR, errno.EEXIST) and on_the_way:
        return f"{quoted_path(found)} is a file, not a folder"
    if code == errno.ENOENT and found is not None and os.path.isdir(found):
        refused = _new_entry_refused(found)
        if refused is None and found != path.parent:  # the folder it goes in is not there
            return missing_folder(path.parent)
        if refused is not None and refused.errno != errno.ENOENT:  # no permission, read-only
            return why_unwritable(refused, found / path.name)
        # it is there, yet a new entry "does not exist": /proc, /sys and the like
        return (
            f"{quoted_path(found)} is a folder that takes no new files (a virtual file "
            "system such as /proc or /sys)"
        )
    if code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        return "no space left for it (disk full, quota or file size limit)"
    if code in (errno.EACCES, errno.EPERM):
        return "no permission to write there"
    if code == errno.EROFS:
        return "the file system is read-only"
    if code == errno.ELOOP:
        return "a loop of symbolic links on the way"
    if code == errno.EISDIR:
        return f"{quoted_path(path)} is a folder"
    return exc.strerror or str(exc)


def make_folder(folder: Path) -> str:
    """The command that makes ``folder`` and those on the way, shell-quoted, in backticks
    as a sentence holds it: every refusal of a folder that does not exist offers it."""
    return f"`{shlex.join(['mkdir', '-p', str(folder)])}`"


def missing_folder(folder: Path) -> str:
    """A folder that is not there, and the command that makes it."""
    return (
        f"the folder {quoted_path(folder)} does not exist: create it first "
        f"({make_folder(folder)}), or "
        "give a path in a folder that exists"
    )


def _new_entry_refused(folder: Path) -> OSError | None:
    """Why ``folder`` (an existing one) takes no new file, or None where it takes one;
    the probe is an unnamed temporary file, nothing is left there."""
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        return exc
    return None
