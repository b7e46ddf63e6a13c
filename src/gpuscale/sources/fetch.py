"""Rounds of MLPerf Training results fetched by name from their public repositories into a
cache, and read from there afterwards.

MLCommons publishes each round in a git repository of its own (``training_results_vX.Y``,
``gpuscale/data/round_sources.json``): every submitter's ``systems/`` and ``results/``
beside gigabytes of benchmark code. A round is fetched as a partial, sparse git clone:
its last commit and trees first (``--filter=blob:none --depth 1``: no file's content), then
the files of ``*/systems`` and ``*/results`` alone, a batch of folders at a time (non-cone
sparse patterns, ``git read-tree -mu``: git fetches a batch's missing files in one pack).
Git rather than an archive, because that is
* verified: git checks every object it receives against its id (a SHA-1 of its content),
  and the commit's trees pin the id of every file, so a corrupt or cut download is refused
  by git itself; the archives GitHub makes of a repository carry no checksum to check;
* only what is read: an archive holds the code too;
* resumable: each batch's pack is kept once whole, so an interrupted fetch goes on from
  the batch it was in.
Until it is whole, a round lies in ``<cache>/training_results_vX.Y.partial``, never read;
whole, git's own folder is removed, a manifest (``gpuscale-fetched.json``: the URL and
commit) written, and the folder moved to ``<cache>/training_results_vX.Y`` in one rename.

The cache is the user's cache folder (``platformdirs``: ``$XDG_CACHE_HOME/gpuscale/rounds``,
``~/.cache/gpuscale/rounds`` on Linux), or :data:`CACHE_ENV`'s; the repository URL the
data's pattern, or :data:`URL_ENV`'s (a mirror, or a test's local repository).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from gpuscale.quantities import counted
from gpuscale.sources.entries import SourceError
from gpuscale.sources.processes import lifeline
from gpuscale.sources.signals import note_on_stop
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.writable import why_unwritable

CACHE_ENV = "GPUSCALE_ROUNDS_CACHE"  # a folder: the rounds fetched
URL_ENV = "GPUSCALE_ROUNDS_URL"  # a URL with {round}: where rounds are fetched from
MANIFEST = "gpuscale-fetched.json"
PARTIAL = ".partial"
# git gives up on a transfer slower than 1 kB/s for a minute (else a stalled link hangs)
GIT_OPTIONS = ("-c", "http.lowSpeedLimit=1000", "-c", "http.lowSpeedTime=60")
# What git says when what it received does not match the ids it was promised
UNVERIFIED = re.compile(
    r"did not send all necessary objects|hash mismatch|bad object|corrupt|inflate|"
    r"SHA1 COLLISION|unable to read sha1|invalid object|packfile .* cannot be accessed",
    re.I,
)

Progress = Callable[[int, int, str], None]


class FetchError(SourceError):
    """A round that could not be fetched (no git, no such repository, the network, a
    download git refused); the message says why and what was kept."""


@dataclass(frozen=True, slots=True)
class Fetched:
    """A round in the cache: its folder, the URL and commit it came from, and whether this
    call fetched it (else it was read from the cache)."""

    round_name: str
    path: Path
    url: str
    commit: str
    fetched_now: bool

    def said(self) -> str:
        """Where the round is, and where it came from."""
        source = f"{self.url} (commit {self.commit[:12]})"
        if self.fetched_now:
            return (
                f"round {self.round_name} fetched from {source} into "
                f"{quoted_path(self.path)}; read from "
                "there from now on"
            )
        return (
            f"round {self.round_name} read from the cache: {quoted_path(self.path)} (from {source})"
        )


def _sources() -> dict:
    text = (resources.files("gpuscale") / "data" / "round_sources.json").read_text()
    return json.loads(text)


def cache_folder() -> Path:
    """Where fetched rounds are kept: :data:`CACHE_ENV`, else the user's cache folder."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    import platformdirs  # lazy: only a command that reads a round not bundled needs it

    return platformdirs.user_cache_path("gpuscale") / "rounds"


def round_url(round_name: str) -> str:
    """The repository of ``round_name`` (``v5.1``): :data:`URL_ENV`'s pattern, else the
    data's, ``{round}`` replaced."""
    pattern = os.environ.get(URL_ENV) or _sources()["url"]
    return pattern.replace("{round}", round_name)


def folder_of(round_name: str, cache: Path) -> Path:
    return cache / f"training_results_{round_name}"


def cached(round_name: str, cache: Path) -> Fetched | None:
    """The round's whole folder in ``cache`` (None: not fetched, or not whole yet)."""
    folder = folder_of(round_name, cache)
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return Fetched(round_name, folder, str(manifest["url"]), str(manifest["commit"]), False)


def fetch_round(
    round_name: str,
    *,
    cache: Path | None = None,
    url: str | None = None,
    progress: Progress | None = None,
) -> Fetched:
    """``round_name``'s systems and results in ``cache`` (default :func:`cache_folder`):
    read from there when whole, else fetched from ``url`` (default :func:`round_url`),
    going on from a fetch interrupted before. ``progress(done, total, unit)`` counts the
    files fetched. Raises :class:`FetchError`."""
    cache = cache or cache_folder()
    url = url or round_url(round_name)
    if (found := cached(round_name, cache)) is not None:
        return found
    if shutil.which("git") is None:
        raise FetchError(
            f"round {round_name} is not in the cache ({quoted_path(cache)}), and fetching it "
            f"needs git: install git, or download {url} yourself and give its folder as a path"
        )
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise FetchError(
            f"cannot make the rounds' cache {quoted_path(cache)}: {why_unwritable(exc, cache)}; "
            f"set {CACHE_ENV} to a folder where you can write, or give the round's folder or "
            "archive as a path"
        ) from None
    with _lock(cache / f".training_results_{round_name}.lock"):
        if (found := cached(round_name, cache)) is not None:  # another process fetched it
            return found
        work = Path(f"{folder_of(round_name, cache)}{PARTIAL}")
        commit = _fetch(round_name, url, work, progress)
        (work / MANIFEST).write_text(
            json.dumps(
                {
                    "round": round_name,
                    "url": url,
                    "commit": commit,
                    "fetched": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                },
                indent=2,
            )
        )
        shutil.rmtree(work / ".git")
        os.replace(work, folder_of(round_name, cache))
    return Fetched(round_name, folder_of(round_name, cache), url, commit, True)


@contextlib.contextmanager
def _lock(path: Path) -> Iterator[None]:
    """One process fetches a round at a time (a second waits, then finds it whole)."""
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _fetch(round_name: str, url: str, work: Path, progress: Progress | None) -> str:
    """Fetch into ``work`` (going on from what an earlier fetch left there); the commit."""
    what = f"round {round_name} from {url}"

    def kept() -> str:  # what the line a signal ends the command with goes on with
        if not work.exists():
            return ""
        return (
            f"; the part of round {round_name} fetched is kept in {work}: the same command "
            "goes on from it"
        )

    note_on_stop(kept)
    if _origin(work) != url:  # nothing yet, a clone cut short, or another source's
        shutil.rmtree(work, ignore_errors=True)
        work.parent.mkdir(parents=True, exist_ok=True)
        clone = ["clone", "--quiet", "--filter=blob:none", "--no-checkout", "--depth=1"]
        _git([*clone, url, str(work)], work.parent, what, work)
        _git(["config", "core.sparseCheckout", "true"], work, what, work)
        _git(["config", "core.sparseCheckoutCone", "false"], work, what, work)
    commit = _git(["rev-parse", "HEAD"], work, what, work).strip()
    listed = _git(["ls-tree", "-r", "-z", "--name-only", "HEAD"], work, what, work)
    batches, files = _batches(listed.split("\0"), _sources())
    if not files:
        raise FetchError(f"{what}: its commit {commit[:12]} holds no */systems or */results")
    patterns = work / ".git" / "info" / "sparse-checkout"
    done = set(patterns.read_text().splitlines()) if patterns.exists() else set()
    if done:  # finish the batch an earlier fetch was cut in
        _git(["read-tree", "-mu", "HEAD"], work, what, work)
    total, fetched = sum(files.values()), sum(files[u] for u in files if _pattern(u) in done)
    for batch in batches:
        if all(_pattern(unit) in done for unit in batch):
            continue
        if progress:
            progress(fetched, total, "files fetched")
        done |= {_pattern(unit) for unit in batch}
        patterns.parent.mkdir(exist_ok=True)
        patterns.write_text("".join(f"{p}\n" for p in sorted(done)))
        _git(["read-tree", "-mu", "HEAD"], work, what, work)
        fetched += sum(files[unit] for unit in batch)
    if progress:
        progress(total, total, "files fetched")
    short = [u for u, n in files.items() if _files_in(work / u) != n]
    if short:
        raise FetchError(
            f"{what}: {counted(len(short), 'folder')} not whole after the fetch ({short[0]}); "
            f"nothing of it is read; fetching again goes on from {work}"
        )
    return commit


def _files_in(folder: Path) -> int:
    """The files below ``folder`` (0: no such folder)."""
    return sum(len(names) for _, _, names in os.walk(folder))


def _origin(work: Path) -> str | None:
    """The URL a partial fetch in ``work`` came from (None: none there, or no commit)."""
    if not (work / ".git").is_dir():
        return None
    found = subprocess.run(
        ["git", "-C", str(work), "config", "remote.origin.url"], capture_output=True, text=True
    )
    head = subprocess.run(
        ["git", "-C", str(work), "rev-parse", "--verify", "--quiet", "HEAD"], capture_output=True
    )
    return found.stdout.strip() if found.returncode == 0 and head.returncode == 0 else None


def _batches(paths: list[str], sources: dict) -> tuple[list[list[str]], Counter]:
    """The folders to fetch (``ORG/systems``, ``ORG/results/SYSTEM``) grouped, in order,
    into batches of at least ``batch_files`` files, and each folder's file count."""
    files: Counter = Counter()
    for path in paths:
        parts = path.split("/")
        if len(parts) >= 3 and parts[1] in sources["folders"]:
            deep = parts[1] == "results" and len(parts) > 3  # a system's own folder
            files["/".join(parts[:3] if deep else parts[:2])] += 1
    batches: list[list[str]] = [[]]
    for unit in files:
        if sum(files[u] for u in batches[-1]) >= sources["batch_files"]:
            batches.append([])
        batches[-1].append(unit)
    return [b for b in batches if b], files


def _pattern(unit: str) -> str:
    """A folder as an anchored sparse-checkout pattern, its special characters escaped."""
    escaped = re.sub(r"([\\*?\[\]!#])", r"\\\1", unit)
    return f"/{escaped}/"


def _git(args: list[str], cwd: Path, what: str, work: Path) -> str:
    """Run git (no prompt, English messages); its output, or :class:`FetchError` with
    its last word and what was kept."""
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_ASKPASS": "true"}
    done = subprocess.run(
        ["git", *GIT_OPTIONS, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        errors="replace",
        preexec_fn=lifeline(),
    )
    if done.returncode == 0:
        return done.stdout
    said = [line.strip() for line in done.stderr.splitlines() if line.strip()]
    why = "; ".join(said[-2:]) or f"git {args[0]} exited with {done.returncode}"
    kept = "nothing was kept"
    if (work / ".git").is_dir():
        kept = f"the part fetched and verified is kept in {work} and a second try goes on from it"
    if UNVERIFIED.search(done.stderr):
        raise FetchError(
            f"refused {what}: what was sent does not match the ids of the round's files "
            f"(git: {why}); nothing of it is read; {kept}"
        )
    raise FetchError(
        f"cannot fetch {what} (git: {why}); nothing of it is read; {kept}; a clone or "
        "download of the repository, made where it can be reached, is read as a path"
    )
