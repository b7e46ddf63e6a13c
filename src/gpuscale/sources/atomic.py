"""Output folders that are never half-written, and never mixed by two writers.

:func:`write_atomically` has the caller write every file into a fresh temporary folder
beside the target, then moves it into place with renames, so a reader (or a crash) sees
the old output or the new one, never a mix. A folder gpuscale wrote before (it holds the
manifest ``.gpuscale-manifest``) is replaced whole, stale files included; into any other
existing folder (``--out .``) the files are moved one by one, each atomically, and the
files the previous manifest listed that this output lacks are removed: nothing of the
user's is ever deleted, nor replaced (a file of theirs with one of our names is an error),
and nothing is written into a raw MLPerf round (``gpuscale.tables.raw_rounds``).
The manifest names the sources the output was made of (the rounds of ``ingest``'s tables):
the same command writing there again from sources that leave one of them out is refused,
since the output it would replace holds data the new one lacks (``--out`` folders are
never merged: two rounds are read together, into one output).
The temporary folder is held locked while its writer lives; one that a killed writer
left beside the target is removed by the next write there. A target that is a mount point
(a volume, another disk) shares no file system with its parent, and cannot be renamed: the
temporary folder is made inside it and the files are moved one by one.
"""

from __future__ import annotations

import errno
import functools
import glob
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuscale.quantities import filled, joined
from gpuscale.sources.processes import new_folder, remove_stale
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.raw_rounds import raw_round_out
from gpuscale.tables.workloads import round_key
from gpuscale.tables.writable import is_mount_point, why_unwritable
from gpuscale.version import __version__

MANIFEST = ".gpuscale-manifest"


class OutputError(Exception):
    """An output folder that cannot be written (a file is there, no permission, disk full)."""


_HEADER = "# gpuscale "  # the manifest's first line: "# gpuscale <version> <command>"
_SOURCE = "# source "  # a line each source the output was made of: "# source v4.1"


@dataclass(frozen=True, slots=True)
class _Manifest:
    """What a gpuscale output folder's manifest says: the names the folder holds, the
    command that wrote them ("" for a version that did not record it) and the sources
    they were made of (empty where none were recorded: nothing to compare)."""

    names: frozenset[str]
    command: str
    sources: tuple[str, ...]


def _manifest(folder: Path) -> _Manifest | None:
    """The manifest of a gpuscale output folder; None for any other folder."""
    try:
        lines = (folder / MANIFEST).read_text(encoding="utf-8").split("\n")
    except (OSError, UnicodeDecodeError):
        return None
    command = lines[0][len(_HEADER) :].partition(" ")[2] if lines[0].startswith(_HEADER) else ""
    sources = tuple(n[len(_SOURCE) :] for n in lines if n.startswith(_SOURCE))
    # Plain names only: a planted manifest must not point outside the folder.
    plain = {n for n in lines if n and "/" not in n and "\\" not in n and n not in (".", "..")}
    return _Manifest(frozenset(n for n in plain if not n.startswith("#")), command, sources)


def written_by(folder: Path) -> str | None:
    """The gpuscale command whose output ``folder`` holds ("" for a manifest of a version
    that did not record it); None for any other folder."""
    if (found := _manifest(folder)) is None:
        return None
    return found.command


def sources_held(out_dir: Path, command: str) -> tuple[str, ...] | None:
    """The sources ``command``'s output in ``out_dir`` was made of (empty: a manifest that
    recorded none), which writing there again replaces; None where it holds none of it."""
    found = _manifest(Path(os.path.abspath(out_dir)))
    return found.sources if found and found.command == command else None


def replacing(out_dir: Path, command: str, what: str) -> str:
    """What writing ``command``'s output into ``out_dir`` replaces there, as a sentence
    ends with it (``, replacing its tables of v0.7``; ``what``: "tables"); "" for none."""
    held = sources_held(out_dir, command)
    if held is None:
        return ""
    return f", replacing its {what} of {joined(held)}" if held else f", replacing its {what}"


def file_written_by(path: Path) -> str | None:
    """The gpuscale command that wrote the file ``path`` (its folder's manifest lists it;
    "" for a manifest of a version that did not record the command); None for any other
    path."""
    found = _manifest(path.parent) if path.is_file() else None
    if found is None or path.name not in found.names:
        return None
    return found.command


def check_owner(
    out_dir: Path, command: str, sources: Sequence[str] = (), *, replaces: bool = False
) -> None:
    """OutputError where writing ``command``'s output of ``sources`` into ``out_dir``
    would lose what it holds: another gpuscale command's output (replaced, or its files
    removed as stale), or this command's of sources that ``sources`` leaves out (the
    rounds of another ingest: the same sources again, or more, replace it), unless it
    ``replaces`` them (a report: a view its rounds redraw in seconds, said by
    :func:`replacing`). Called before the work too (a report's figures take a while), and
    again as the output is moved in."""
    out_dir = Path(os.path.abspath(out_dir))
    found = _manifest(out_dir)
    if not found or not found.command or not command:
        return
    out = quoted_path(out_dir)
    if found.command != command:
        raise OutputError(
            f"{out} holds the output of `gpuscale {found.command}`, not of `gpuscale "
            f"{command}`; nothing was written: choose another output folder, or remove it first"
        )
    if (lost := [s for s in found.sources if sources and s not in sources]) and not replaces:
        kept = sorted({*found.sources, *sources}, key=lambda s: (round_key(s), s))
        raise OutputError(
            f"{out} holds `gpuscale {command}`'s output of {joined(found.sources)}, which this "
            f"one of {joined(sources)} would replace ({joined(lost)} lost); nothing was written: "
            f"give {joined(kept)} in one command, choose another output folder, or remove it first"
        )


def write_atomically(
    out_dir: Path,
    write: Callable[[Path], object],
    *,
    command: str = "",
    sources: Sequence[str] = (),
    replaces: bool = False,
) -> list[Path]:
    """Call ``write(tmp)`` to put every output file in the folder ``tmp``, then move them
    into ``out_dir``; return the final paths. Raises :class:`OutputError` with one clear
    sentence when ``out_dir`` cannot be written, or holds the output of another
    ``command`` than this one (recorded in the manifest with the version), or this
    command's output of a source that ``sources`` (what this output is made of, e.g. its
    rounds; recorded too) leaves out, unless it ``replaces`` them (:func:`check_owner`);
    nothing is left behind then.
    A link ``out_dir`` is written through, to its target."""
    sources = tuple(sources)
    out_dir = Path(os.path.abspath(out_dir))  # `--out .` has a parent to write beside
    raw = raw_round_out(out_dir)  # whoever calls: never into a raw round's logs
    if raw:
        raise OutputError(f"{quoted_path(out_dir)} {raw}; nothing was written")
    try:
        if out_dir.is_symlink():
            out_dir = Path(os.path.realpath(out_dir))
        if _is_other_than_folder(out_dir):
            raise OutputError(
                f"{quoted_path(out_dir)} exists and is not a folder; choose another output folder"
            )
        check_owner(out_dir, command, sources, replaces=replaces)
        mount = is_mount_point(out_dir)  # renames from beside it would cross file systems
        base = out_dir if mount else out_dir.parent
        # a run killed before it could clean up (SIGKILL) left its folders: none holds them
        for leftover in ("tmp", "old"):
            remove_stale(base, f".{glob.escape(out_dir.name)}.{leftover}-*")
        base.mkdir(parents=True, exist_ok=True)
        # held locked while this process lives: another run leaves it alone
        tmp, lock = new_folder(base, f".{out_dir.name}.tmp-")
        tmp.chmod(0o777 & ~_umask())  # mkdtemp makes 0700; the output follows the umask
    except OSError as exc:
        raise OutputError(
            f"cannot write {quoted_path(out_dir)}: {why_unwritable(exc, out_dir)}; choose "
            "another output folder"
        ) from None
    try:
        write(tmp)
        names = sorted(p.name for p in tmp.iterdir())
        header = f"{_HEADER}{__version__} {command}".rstrip()
        said = [header, *(f"{_SOURCE}{s}" for s in sources), *names]
        (tmp / MANIFEST).write_text("\n".join(said) + "\n", encoding="utf-8")
        made = functools.partial(check_owner, out_dir, command, sources, replaces=replaces)
        _move_into_place(tmp, out_dir, names, made, whole=not mount)
    except OSError as exc:
        raise OutputError(_not_written(exc, out_dir, base)) from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        os.close(lock)
    return [out_dir / name for name in names]


def _not_written(exc: OSError, out_dir: Path, base: Path) -> str:
    """Why the output was not written: a refusal in the output's own place (``base``,
    where its temporary folder and ``out_dir`` lie) as :func:`why_unwritable` says it;
    one of a file elsewhere that the writer reads or writes (a cache entry, a font) names
    that file with the system's word, never the output, which could be written."""
    other = exc.filename and os.path.abspath(os.fsdecode(exc.filename))
    if other and os.path.commonpath([other, os.path.abspath(base)]) != os.path.abspath(base):
        return (
            f"cannot write {quoted_path(out_dir)}: {quoted_path(other)} (read or written on "
            f"the way, not a file of the output): {exc.strerror or exc}"
        )
    return f"cannot write {quoted_path(out_dir)}: {why_unwritable(exc, out_dir)}"


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _is_other_than_folder(path: Path) -> bool:
    """One stat: ``exists() and not is_dir()`` would see another writer's folder vanish
    between the two calls and call it a file."""
    try:
        return not stat.S_ISDIR(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):  # not there (a file on the way: said later)
        return False


_RACE = (errno.EEXIST, errno.ENOTEMPTY, errno.ENOENT)


def _move_into_place(
    tmp: Path,
    out_dir: Path,
    names: list[str],
    checked: Callable[[], None],
    *,
    whole: bool = True,
) -> None:
    """The files of ``tmp`` put in ``out_dir`` (``checked``: :func:`check_owner` of this
    output, before each try; ``whole``: our own earlier output swapped as one folder; else
    file by file)."""
    for _ in range(100):  # another writer may swap its folder in between two renames
        try:
            checked()
            if _swap(tmp, out_dir, names, whole=whole):
                return
        except OSError as exc:
            if exc.errno not in _RACE:
                raise
    raise OSError(errno.EBUSY, "other writers kept replacing the folder")


def _holds_cwd(folder: Path) -> bool:
    """Whether the working directory is ``folder`` or inside it: swapping that folder
    away would leave the user's shell in a deleted directory, so its files are replaced
    one by one instead."""
    try:
        cwd = Path.cwd().resolve()
    except OSError:  # the working directory itself is gone
        return False
    here = folder.resolve()
    return cwd == here or here in cwd.parents


def _settled(out_dir: Path, found: _Manifest | None) -> bool:
    """Whether ``out_dir`` still reads as it did (its manifest, or none) on a few looks:
    a concurrent writer's swap shows as the folder gone or its manifest changed."""
    return all(os.path.isdir(out_dir) and _manifest(out_dir) == found for _ in range(3))


def _swap(tmp: Path, out_dir: Path, names: list[str], *, whole: bool = True) -> bool:
    """One attempt: True when the output is in place (a race raises or returns False)."""
    if not out_dir.exists():
        tmp.rename(out_dir)
        return True
    found = _manifest(out_dir)
    previous = found.names if found else frozenset()  # the names our manifest lists
    if (
        whole
        and found is not None
        and set(os.listdir(out_dir)) <= previous | {MANIFEST}
        and not _holds_cwd(out_dir)
    ):
        # Our own earlier output: swap the whole folder, stale files and all.
        old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
        old.rmdir()
        out_dir.rename(old)
        try:
            tmp.rename(out_dir)
        finally:
            shutil.rmtree(old, ignore_errors=True)
        return True
    # A folder holding other things: file by file, and only our stale files removed;
    # a file of the user's with one of our names is theirs: refuse rather than replace it
    theirs = [n for n in names if n not in previous and os.path.lexists(out_dir / n)]
    if theirs and not _settled(out_dir, found):
        return False  # another gpuscale writer swapped its folder in meanwhile: look again
    if theirs:
        shown = ", ".join(theirs[:3]) + filled(" and {} more", max(0, len(theirs) - 3))
        raise OutputError(
            f"{quoted_path(out_dir)} already holds {shown}, which gpuscale did not write; "
            "nothing was written: choose another output folder, or move them first"
        )
    for name in [*names, MANIFEST]:
        os.replace(tmp / name, out_dir / name)
    for stale in previous - set(names):
        (out_dir / stale).unlink(missing_ok=True)
    return True
