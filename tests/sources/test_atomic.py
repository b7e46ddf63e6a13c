"""Output folders are written whole or not at all, never mixed, never over the user's files."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from gpuscale.sources import OutputError, write_atomically
from gpuscale.tables.writable import is_mount_point


def files(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in folder.iterdir() if not p.name.startswith(".")}


def writer(tag: str, names: tuple[str, ...] = ("a.txt", "b.txt")):
    def write(folder: Path) -> None:
        for name in names:
            (folder / name).write_text(tag)

    return write


def test_new_folder_and_replacement_leave_no_stale_files(tmp_path: Path) -> None:
    out = tmp_path / "report"
    write_atomically(out, writer("one", ("a.txt", "old.png")))
    write_atomically(out, writer("two", ("a.txt", "b.txt")))
    assert files(out) == {"a.txt": "two", "b.txt": "two"}  # old.png was ours: gone
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report")]


def test_a_users_folder_keeps_its_own_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    write_atomically(tmp_path, writer("one", ("a.txt", "stale.png")))
    write_atomically(tmp_path, writer("two", ("a.txt",)))
    assert files(tmp_path) == {"notes.txt": "mine", "a.txt": "two"}


def test_a_users_file_with_one_of_our_names_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("my own page")
    with pytest.raises(OutputError, match=r"already holds index\.html, which gpuscale did not"):
        write_atomically(tmp_path, writer("one", ("index.html", "a.png")))
    assert files(tmp_path) == {"index.html": "my own page"}
    # once gpuscale wrote a name there, a second run replaces it
    write_atomically(tmp_path / "out", writer("one", ("index.html",)))
    write_atomically(tmp_path / "out", writer("two", ("index.html",)))
    assert files(tmp_path / "out") == {"index.html": "two"}


def test_a_failed_write_changes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "report"
    write_atomically(out, writer("one"))

    def broken(folder: Path) -> None:
        (folder / "a.txt").write_text("half")
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OutputError, match="no space left"):
        write_atomically(out, broken)
    assert files(out) == {"a.txt": "one", "b.txt": "one"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".report")]


def test_a_file_elsewhere_that_refuses_is_named_not_the_output(tmp_path, unenterable) -> None:
    """A file the writer reads on the way (a cache entry in a folder of another user's)
    refused it, and the refusal was said "cannot write 'report': no permission to write
    there", the output blamed; the file that refused is named, and nothing is written."""
    cache = unenterable(tmp_path / "cache")
    out = tmp_path / "work" / "report"
    out.parent.mkdir()

    def reads_the_cache(folder: Path) -> None:
        (folder / "a.txt").write_text("half")
        os.stat(cache / "entry")

    with pytest.raises(OutputError) as refused:
        write_atomically(out, reads_the_cache)
    said = str(refused.value)
    assert said.startswith(f"cannot write {out}: {cache / 'entry'} (read or written on the way")
    assert "no permission to write there" not in said and not out.exists()


def test_bad_targets_are_one_clear_error(tmp_path: Path) -> None:
    existing = tmp_path / "file"
    existing.write_text("x")
    with pytest.raises(OutputError, match="exists and is not a folder"):
        write_atomically(existing, writer("one"))
    with pytest.raises(OutputError, match="cannot write"):
        write_atomically(Path("/proc/gpuscale-report"), writer("one"))


def test_concurrent_writers_never_mix(tmp_path: Path) -> None:
    out = tmp_path / "report"
    names = tuple(f"f{i}.txt" for i in range(30))
    errors: list[BaseException] = []

    def run(tag: str) -> None:
        try:
            for _ in range(15):
                write_atomically(out, writer(tag, names))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(t,)) for t in ("x", "y", "z")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    contents = set(files(out).values())
    assert len(contents) == 1 and set(files(out)) == set(names)


def test_another_commands_output_is_never_replaced(tmp_path) -> None:
    """`report --out d` then `ingest --out d` keeps the report (an output folder holds both)."""
    out = tmp_path / "d"
    write_atomically(out, lambda f: (f / "index.html").write_text("report"), command="report")
    with pytest.raises(OutputError, match="gpuscale report"):
        write_atomically(out, lambda f: (f / "runs.csv").write_text("x"), command="ingest")
    assert (out / "index.html").read_text() == "report"
    assert not (out / "runs.csv").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["d"]  # no temporary folder left
    write_atomically(out, lambda f: (f / "index.html").write_text("again"), command="report")
    assert (out / "index.html").read_text() == "again"


@pytest.mark.parametrize("into", ["d", "."])  # a folder of its own, or the user's
def test_the_output_of_a_source_left_out_is_never_replaced(tmp_path, monkeypatch, into) -> None:
    """`ingest v0.7 --out d` then `ingest v5.0 --out d` keeps v0.7's tables; the same
    sources again, or more, replace them; a manifest that recorded none, as before."""
    monkeypatch.chdir(tmp_path)
    out = Path(into)

    def ingest(tag: str, *sources: str) -> list[Path]:
        return write_atomically(out, writer(tag, ("runs.csv",)), command="ingest", sources=sources)

    ingest("one", "v0.7")
    with pytest.raises(OutputError, match=r"of v0\.7, which this one of v5\.0 would replace"):
        ingest("two", "v5.0")
    assert files(out)["runs.csv"] == "one"
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name]  # nothing left
    ingest("three", "v0.7")
    ingest("four", "v5.0", "v0.7")
    assert files(out)["runs.csv"] == "four"
    with pytest.raises(OutputError, match=r"\(v0\.7 lost\)"):
        ingest("five", "v5.0")
    write_atomically(out, writer("six", ("runs.csv",)), command="ingest")  # sources not said
    ingest("seven", "v5.0")  # none recorded: nothing to compare
    assert files(out)["runs.csv"] == "seven"


def test_a_linked_out_is_written_through_to_its_target(tmp_path) -> None:
    target = tmp_path / "real"
    write_atomically(target, lambda f: (f / "a.txt").write_text("1"), command="report")
    link = tmp_path / "out"
    link.symlink_to(target)
    write_atomically(link, lambda f: (f / "a.txt").write_text("2"), command="report")
    assert link.is_symlink() and (target / "a.txt").read_text() == "2"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "real"]


def test_new_folders_follow_the_umask(tmp_path) -> None:
    old = os.umask(0o022)
    try:
        write_atomically(tmp_path / "d", lambda f: (f / "a.txt").write_text("1"))
    finally:
        os.umask(old)
    assert (tmp_path / "d").stat().st_mode & 0o777 == 0o755


def test_the_folder_the_user_stands_in_is_written_file_by_file(tmp_path: Path, monkeypatch) -> None:
    """`gpuscale report --out .` twice, and --out naming the working directory: the folder
    is never swapped away from under the user's shell."""
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    inode = os.stat(".").st_ino
    write_atomically(Path("."), writer("one", ("a.txt", "old.png")))
    write_atomically(Path("."), writer("two", ("a.txt", "b.txt")))
    write_atomically(here, writer("three", ("a.txt", "b.txt")))
    assert os.stat(".").st_ino == inode  # still the same folder, not a replaced one
    assert files(Path(".")) == {"a.txt": "three", "b.txt": "three"}  # old.png was ours: gone


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_a_virtual_file_system_is_said_not_no_such_file() -> None:
    with pytest.raises(OutputError) as refused:
        write_atomically(Path("/proc/gpuscale-out"), lambda tmp: (tmp / "a").write_text("a"))
    message = str(refused.value)
    assert "No such file or directory" not in message
    assert "takes no new files" in message and "choose another output folder" in message


@pytest.fixture(params=["tmpfs", "bind"])
def mount_point(tmp_path: Path, request):  # type: ignore[no-untyped-def]
    """A folder that is a file system of its own (tmpfs), as a volume or a second disk
    is, or a folder of the same disk bound there (a container's or a job's volume: its
    device is its parent's); skipped where this process may not mount one."""
    import shutil
    import subprocess

    point = tmp_path / "my volume"
    point.mkdir()
    mount = shutil.which("mount")
    if mount is None or os.geteuid() != 0:
        pytest.skip("mounting needs root and mount(8)")
    if request.param == "bind":
        (tmp_path / "disk").mkdir()
        how = ["--bind", str(tmp_path / "disk")]
    else:
        how = ["-t", "tmpfs", "none"]
    done = subprocess.run([mount, *how, str(point)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here: {done.stderr.decode().strip()}")
    try:
        yield point
    finally:
        subprocess.run(["umount", str(point)], capture_output=True)


def test_a_mount_point_is_written_into(mount_point: Path) -> None:
    """`report --out` a mounted volume writes there, not 'Invalid cross-device link' (a
    temporary folder beside it would be on its parent's file system, or outside the bound
    folder)."""
    assert is_mount_point(mount_point)
    (mount_point / "notes.txt").write_text("mine")
    write_atomically(mount_point, writer("one", ("a.txt", "stale.png")))
    write_atomically(mount_point, writer("two", ("a.txt",)))
    assert files(mount_point) == {"notes.txt": "mine", "a.txt": "two"}
    assert [p.name for p in mount_point.iterdir() if p.name.startswith(".")] == [
        ".gpuscale-manifest"
    ]  # no temporary folder left inside
    assert is_mount_point(mount_point)  # still the volume, not a folder renamed over it


def test_a_bound_folder_is_a_mount_point_by_the_kernels_table(tmp_path: Path) -> None:
    """A bind mount of a folder of the same disk shares its parent's device, so
    ``os.path.ismount`` says no; the kernel's table of mounts lists it (a space in its
    name written \\040 there)."""
    bound, beside = tmp_path / "my volume", tmp_path / "other"
    bound.mkdir()
    beside.mkdir()
    place = str(bound).replace(" ", "\\040")
    table = tmp_path / "mountinfo"
    table.write_text(
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        f"99 22 8:1 /srv/disk {place} rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    )
    assert not os.path.ismount(bound)
    assert is_mount_point(bound, str(table))
    assert not is_mount_point(beside, str(table))
    assert not is_mount_point(bound, str(tmp_path / "no table"))  # ismount's answer then
