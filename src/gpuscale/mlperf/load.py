"""The rounds a command asked for, as one set of tables: raw paths read now (a folder that
holds no results says why, and what to give instead) beside bundled rounds.

Prints nothing; a request that cannot be served raises :class:`NoResultsError` (a path
with no MLPerf results), :class:`RoundNamesError` (round names that do not fit the paths,
or a round that is not bundled) or ``SourceError`` (a path that cannot be read at all),
each with a message for people.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from pathlib import Path

from gpuscale.mlperf.bundled import load_round
from gpuscale.mlperf.duplicates import combine
from gpuscale.mlperf.ingest import Progress, read_round
from gpuscale.mlperf.layout import round_name_of
from gpuscale.quantities import agreeing, counted
from gpuscale.sources import SourceError
from gpuscale.sources.atomic import written_by
from gpuscale.sources.entries import is_archive
from gpuscale.tables import RoundTables
from gpuscale.tables.workloads import RENAMED, STUDY_ROUND, WORKLOADS, round_name

EXPECTED = "expected <org>/systems/*.json and <org>/results/<system>/<benchmark>/result_*.txt"


class NoResultsError(SourceError):
    """A path that holds no MLPerf results; the message says why and what to give."""


class RoundNamesError(ValueError):
    """Round names that do not fit the paths given, or a round that is not bundled."""


def read_paths(
    paths: Sequence[Path],
    round_names: Sequence[str | None] | None = None,
    *,
    progress: Progress | None = None,
    benchmark_option: str | None = "-b",
) -> RoundTables:
    """Raw rounds read and stacked; ``round_names`` name the paths' rounds (one for all, or
    one each; none: read from each path's name). A path that is no round raises; one that
    does not exist and reads like a benchmark name is said to be one, given by
    ``benchmark_option`` (None: the command takes no benchmark)."""
    names = list(round_names or [])
    if names and len(names) not in (1, len(paths)):
        raise RoundNamesError(
            f"{len(names)} --round names for {len(paths)} paths: give one per path, one for "
            "all, or none (the round is then read from each path's name)"
        )
    if len(names) == 1:
        names = names * len(paths)
    parts = []
    for k, path in enumerate(paths):
        try:
            part = read_round(path, names[k] if names else None, progress=progress)
        except (SourceError, ValueError) as exc:
            if path.is_dir() and not _holds_submitters(path):
                # the reason, before any word on round names
                raise NoResultsError(no_results(path)) from exc
            if benchmark_option and _like_a_benchmark(path):
                # `gpuscale analyze brt`: a benchmark typed where a path goes
                hint = f"a benchmark? give it with {benchmark_option} {path}"
                raise SourceError(f"{exc} ({hint})") from exc
            raise
        if part.systems.empty and part.runs.empty:
            raise NoResultsError(no_results(path))
        parts.append(part)
    return combine(parts)


def _like_a_benchmark(path: Path) -> bool:
    """A name that is no path and close to a benchmark's (``brt``, ``bert``; not
    ``nosuch``)."""
    if path.exists() or len(path.parts) != 1 or path.suffix:
        return False
    names = [*WORKLOADS, *RENAMED, "study", "sd"]
    return bool(difflib.get_close_matches(path.name.lower(), names, n=1, cutoff=0.6))


def _holds_submitters(path: Path) -> bool:
    """Whether a folder holds at least one ``<org>/results`` folder (a round's shape)."""
    try:
        return any((child / "results").is_dir() for child in path.iterdir())
    except OSError:
        return False


# The commands whose output folders hold tables (Parquet and CSV).
TABLE_WRITERS = ("ingest", "dataset")


# What a folder of rounds holds, by (whether it holds folders, whether archives).
_ROUND_KINDS = {
    (True, True): "rounds",
    (True, False): "round folders",
    (False, True): "round archives",
}


def no_results(path: Path) -> str:
    """Why a path gave no MLPerf results, with what to give instead: a folder of round
    folders, one submitter's folder, or something else."""
    command = written_by(path) if path.is_dir() else None
    if command is not None:  # gpuscale's own output: say which command wrote it
        what = "gpuscale"  # a version that did not say which command wrote it
        if command:
            what = f"`gpuscale {command}`"
        said = (
            f"no MLPerf results in {path}: it holds what {what} wrote, not raw logs; give the "
            "round folder or archive that was read"
        )
        if command in TABLE_WRITERS:
            said += " (its tables read with pandas.read_parquet)"
        return said
    if path.is_dir():
        folders = [p.name for p in path.iterdir() if re.search(r"v\d+\.\d+(?:\.\d+)?$", p.name)]
        archives = [p.name for p in path.iterdir() if is_archive(p) and round_name_of(p)]
        rounds = sorted({*folders, *archives})  # a download folder holds the archives
        if rounds:
            kind = _ROUND_KINDS[(bool(folders), bool(archives))]
            shown = " ".join(str(path / r) for r in rounds[:3])
            return (
                f"no MLPerf results in {path}: it holds {kind} ({', '.join(rounds)}); "
                f"give them as paths, e.g. {shown}"
            )
        if (path / "systems").is_dir() or (path / "results").is_dir():
            return (
                f"no MLPerf results in {path}: it looks like one submitter's folder "
                f"(systems/, results/); give the round folder that holds it ({path.parent}), "
                "with --round vX.Y if its name does not say the round"
            )
    return f"no MLPerf results in {path}: {EXPECTED}"


# The rounds a study command (analyze, report) reads when given none: the study's.
STUDY_ROUNDS = (STUDY_ROUND,)


def load_rounds(
    paths: Sequence[Path] | None,
    round_names: Sequence[str] | None,
    *,
    default: Sequence[str] | None = None,
    progress: Progress | None = None,
    on_read: Callable[[RoundTables], None] | None = None,
) -> RoundTables:
    """Tables from raw paths (read now) and bundled rounds: ``round_names`` names bundled
    rounds, added beside the paths; a path whose name says no round takes the first
    names as its round (one for all such paths, or one each). Given neither, the
    ``default`` bundled rounds (none: every bundled round). ``on_read`` is given the
    tables of the raw paths alone (their problems: what to tell the reader)."""
    if not paths:
        return _bundled(list(round_names or default or []))
    own, bundled = _split_round_names(list(paths), list(round_names or []))
    _one_copy_each(list(paths), own, bundled)
    beside = _bundled(bundled) if bundled else None  # one not bundled: said before the read
    tables = read_paths(paths, own, progress=progress)
    if on_read is not None:
        on_read(tables)
    return combine([tables, beside]) if beside is not None else tables


def _one_copy_each(paths: list[Path], own: list[str], bundled: list[str]) -> None:
    """Refuse a round given both as a path and as a bundled ``--round``, before anything is
    read: merged, one copy's results would replace the other's without a word."""
    if len(own) == len(paths):
        said = own  # one name each
    elif len(own) == 1:
        said = own * len(paths)  # one name for every path
    else:
        said = [round_name_of(p) for p in paths]
    wanted = {round_name(n) for n in bundled}
    for path, name in zip(paths, said, strict=True):
        if name is None or round_name(name) not in wanted:
            continue
        how = f"whose name says {round_name(name)}"
        if round_name_of(path) is None:  # the round came from --round, not the path's name
            how = f"read as {round_name(name)} by --round"
        raise RoundNamesError(
            f"round {round_name(name)} given both as a path ({path}, {how}) and as a bundled "
            "--round, which beside such a path adds the bundled tables: give one (drop --round "
            "to read the path alone)"
        )


def _bundled(round_names: list[str]) -> RoundTables:
    try:
        return load_round(*round_names)
    except (KeyError, ValueError) as exc:
        raise RoundNamesError(str(exc)) from exc


def _split_round_names(paths: list[Path], names: list[str]) -> tuple[list[str], list[str]]:
    """(the names of the paths' rounds, the bundled rounds to add). Paths whose names say
    their round need none: every ``--round`` is then a bundled round."""
    unnamed = [p for p in paths if round_name_of(p) is None]
    if not unnamed or not names:
        return [], names
    if len(unnamed) < len(paths):  # some paths say their round: name the others only
        if len(names) < len(unnamed):
            raise RoundNamesError(
                f"{counted(len(unnamed), 'path')} {agreeing(len(unnamed), 'does', 'do')} not say "
                "their round in their name "
                f"({', '.join(str(p) for p in unnamed)}): give one --round each"
            )
        given = iter(names[: len(unnamed)])
        own = [next(given) if p in unnamed else round_name_of(p) for p in paths]
        return [str(n) for n in own], names[len(unnamed) :]
    if len(names) == 1:
        return names, []
    return names[: len(paths)], names[len(paths) :]
