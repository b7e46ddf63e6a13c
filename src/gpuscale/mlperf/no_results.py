"""Why a path given as an MLPerf round holds no results, and what to give instead: said by
:func:`gpuscale.mlperf.ingest.read_round` itself, so that the library and the command line
(which renders the same error) refuse a folder alike: a folder of round folders or
archives, one submitter's folder, a folder gpuscale wrote (a report's, ingest's) or a file
in one (a table ingest wrote), a file of gpuscale's own results, an empty folder."""

from __future__ import annotations

import re
from pathlib import Path

from gpuscale.mlperf.layout import round_name_of
from gpuscale.sources import SourceError
from gpuscale.sources.atomic import file_written_by, written_by
from gpuscale.sources.bounded import results_file_given_as_round
from gpuscale.sources.entries import is_archive
from gpuscale.tables.commands import quoted_path

EXPECTED = "expected <org>/systems/*.json and <org>/results/<system>/<benchmark>/result_*.txt"


class NoResultsError(SourceError):
    """A path that holds no MLPerf results; the message says why and what to give."""


def holds_submitters(path: Path) -> bool:
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


def _wrote(command: str) -> str:
    """Who wrote an output, as a refusal names it (a version that did not record it:
    gpuscale)."""
    return f"`gpuscale {command}`" if command else "gpuscale"


def written_file(path: Path) -> str | None:
    """Why ``path``, a file gpuscale wrote into an output folder (a table of ``ingest``'s,
    a report's page), is no round, with what to give instead; None for any other path."""
    command = file_written_by(path)
    if command is None:
        return None
    said = (
        f"no MLPerf results in {quoted_path(path)}: it is a file {_wrote(command)} wrote, not "
        "raw logs; give the round folder or archive that was read"
    )
    if command in TABLE_WRITERS:
        reader = "read_csv" if path.suffix.lower() == ".csv" else "read_parquet"
        said += f" (a table: read it with pandas.{reader})"
    return said


def no_results(path: Path) -> str:
    """Why a path gave no MLPerf results, with what to give instead: a folder of round
    folders, one submitter's folder, or something else."""
    command = written_by(path) if path.is_dir() else None
    if command is not None:  # gpuscale's own output: say which command wrote it
        said = (
            f"no MLPerf results in {quoted_path(path)}: it holds what {_wrote(command)} wrote, "
            "not raw logs; give the round folder or archive that was read"
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
            shown = " ".join(quoted_path(path / r) for r in rounds[:3])  # pasted as they are
            return (
                f"no MLPerf results in {quoted_path(path)}: it holds {kind} ({', '.join(rounds)}); "
                f"give them as paths, e.g. {shown}"
            )
        if (path / "systems").is_dir() or (path / "results").is_dir():
            return (
                f"no MLPerf results in {quoted_path(path)}: it looks like one submitter's folder "
                "(systems/, results/); give the round folder that holds it "
                f"({quoted_path(path.parent)}), "
                "with --round vX.Y if its name does not say the round"
            )
        inner = [p for p in path.iterdir() if p.is_dir() and holds_submitters(p)]
        if len(inner) == 1:  # an archive unpacked into a folder of its own name
            return (
                f"no MLPerf results in {quoted_path(path)} itself: its one folder of "
                f"submitters' results is a level down; give {quoted_path(inner[0])}"
            )
    return f"no MLPerf results in {quoted_path(path)}: {EXPECTED}"


def refused_path(path: Path) -> SourceError | None:
    """The error a path that could not be read as a round (its round not said, not a
    folder or archive) is better refused with: a file of gpuscale's own results names what
    reads it, as a file gpuscale wrote into an output folder does; a folder holding no
    submitter's results says what it holds (before any word on round names); None where
    the reader's own error says it best."""
    if said := results_file_given_as_round(path):  # gpuscale's own: what reads it
        return SourceError(said)
    if said := written_file(path):
        return NoResultsError(said)
    if path.is_dir() and not holds_submitters(path):
        return NoResultsError(no_results(path))
    return None
