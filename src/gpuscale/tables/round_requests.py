"""The requests of the commands over MLPerf rounds, each option written once: which rounds
and workloads a command reads (:class:`RoundSelection`, shared by ``scores``, ``analyze``,
``energy``, ``trends``, ``report``, ``dataset`` and ``plan``) and what ``scores`` shows
(:class:`ScoresOptions`), and where ``ingest`` and ``dataset`` write (:class:`IngestOut`,
:class:`DatasetOut`: an empty ``--out`` refused, as every command's, and one that does
not fit a folder, ``gpuscale.tables.out_paths``). Pure Python at import: the CLI imports
them at start."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import ClassVar

from gpuscale.quantities import BadQuantity
from gpuscale.tables.commands import quoted_path, suggested_command
from gpuscale.tables.out_paths import check_folder_out
from gpuscale.tables.raw_rounds import is_archive
from gpuscale.tables.requests import (
    FieldError,
    argument,
    empty_item,
    flag,
    folder_out_option,
    given_twice,
    repeatable_option,
)
from gpuscale.tables.workloads import STUDY_ROUND, round_name, round_name_meant, rounds_read_as


def listed(example: str) -> Callable[[list[str]], tuple[str, ...]]:
    """The parse of names given once or more, each maybe a comma-separated list (``-b
    bert,gpt3``): an empty one is refused (``-b ''`` read every benchmark), ``example``
    the names the option takes, and one given twice, whatever its case (``-b bert,bert``
    read bert once without a word)."""

    def names_of(values: list[str]) -> tuple[str, ...]:
        names = tuple(n.strip() for value in values for n in value.split(","))
        if not all(names):
            raise BadQuantity(",".join(values), empty_item("name", example))
        if twice := given_twice([n.lower() for n in names], "name"):
            raise BadQuantity(",".join(values), twice)
        return names

    return names_of


# The option the command line spells RoundSelection.round_names' one-path name with, for a
# refusal that names the field (``round_name='v4.1'`` from Python, ``--round v4.1``).
ROUND_OPTION = {"round_name": "--round"}


# RoundSelection's help, each command saying its own default (``each_command``)
_PATHS = "Round directories or archives (.tar, .tar.gz, .tar.xz, .zip)"
_STUDY = f"the bundled {STUDY_ROUND}, the study's round"
_WORKLOADS = (
    "Benchmark or workload names, repeatable or comma-separated; 'study' for the study's four"
)


@dataclass(frozen=True, kw_only=True, slots=True)
class RoundSelection:
    """``paths``: raw round folders or archives, read now; ``round_names``: rounds by name
    (bundled, or fetched into the cache), added beside them; ``benchmark``: the workloads
    asked (names as people type them, resolved against the tables read:
    ``gpuscale.names.choose_workloads``)."""

    paths: tuple[Path, ...] | None = argument(
        help=f"{_PATHS}; default: every bundled round.",
        each_command=dict.fromkeys(("analyze", "report"), f"{_PATHS}; default: {_STUDY}."),
    )
    round_names: tuple[str, ...] | None = repeatable_option(
        str,
        names=("--round",),
        parse=listed("v4.1,v5.0"),
        help="Rounds by name, e.g. v4.1 (repeatable, or v4.1,v5.0): bundled, or any other "
        "MLCommons published, fetched once from its public results repository into the "
        "cache; with paths, added beside them. Beside a path whose name says no round "
        "(./my-results), the first --round (or one per such path, in order) names the round "
        "whose rules read it, its results listed as yours: 'my-results (v4.1)' (a warning "
        "says where its logs' dates or benchmarks are another round's); that round is added "
        "beside it where bundled, not fetched for it.",
    )
    benchmark: tuple[str, ...] | None = repeatable_option(
        str,
        names=("--benchmark", "-b", "--workload"),  # --workload as plan and advise spell it
        parse=listed("bert,gpt3"),
        help=f"{_WORKLOADS} (default: every one loaded).",
        each_command={"report": f"{_WORKLOADS} (default: the study's four)."},
    )
    offline: bool = flag(
        "--offline",
        help="Never fetch: a --round neither bundled nor in the cache is refused.",
    )

    def __post_init__(self) -> None:
        for name in self.round_names or ():  # refused before any round is read
            if round_name(name) is None:
                meant = round_name_meant(name)
                said = f"did you mean {meant!r}?" if meant else "e.g. v4.1"
                typed = os.sep in name or is_archive(name) or os.path.exists(name)
                if meant is None and typed:
                    # a folder or archive: the command reads it as a path argument
                    said = f"a folder or archive is given without --round: {quoted_path(name)}"
                raise FieldError("round_names", name, f"not a round name ({said})")

    @property
    def asked(self) -> bool:
        """Whether any round was asked for (paths or round names)."""
        return bool(self.paths or self.round_names)

    @property
    def read_as(self) -> list[str]:
        """How each round typed otherwise than named was read (``'4.1' read as v4.1``)."""
        return rounds_read_as(self.round_names or ())

    def data_arguments(self) -> tuple[str, ...]:
        """The data arguments as a command line gives them, the paths absolute (a command
        a report names runs wherever the report is read); none without a path: the rounds
        read are named then (``--round``)."""
        if not self.paths:
            return ()
        rounds = [a for name in self.round_names or () for a in ("--round", name)]
        return (*(os.path.abspath(p) for p in self.paths), *rounds)


@dataclass(frozen=True, kw_only=True, slots=True)
class ScoresOptions:
    """What the scores table shows (``gpuscale.tables.views.scores_view``)."""

    all_columns: bool = flag("--all-columns", help="Every column of the scores table.")
    duplicates: bool = flag(
        "--duplicates",
        help="Only the results a round lists under two system names (the same runs, e.g. a "
        "-POWER twin), both rows; by default every result is listed, same_runs_as naming "
        "the twin.",
    )


TABLES = "the tables (systems, runs, scores and problems, CSV and Parquet)"
DATASET = "the dataset's files (results and runs, CSV and Parquet)"


@dataclass(frozen=True, kw_only=True, slots=True)
class FolderOut:
    """Where a command writes its folder of files, checked before anything is read: a
    command's subclass gives the option (its default) and ``holds``, what the folder
    holds (both said in a refusal)."""

    holds: ClassVar[str]
    out: Path

    def __post_init__(self) -> None:
        (out,) = (f for f in fields(self) if f.name == "out")
        check_folder_out("out", self.out, holds=self.holds, default=out.default)


@dataclass(frozen=True, kw_only=True, slots=True)
class IngestOut(FolderOut):
    """Where ``gpuscale ingest`` writes its tables."""

    holds: ClassVar[str] = TABLES
    out: Path = folder_out_option(Path("gpuscale-tables"), "the tables")


def round_typed_as_path(path: Path) -> str | None:
    """The round a path that is not there names (``v5.0``, ``4.1``, ``v41``: ``v4.1``),
    typed where a round's folder goes; None for any other path."""
    if path.exists() or len(path.parts) != 1:
        return None
    return round_name_meant(path.name)


def rounds_typed_as_paths(paths: Iterable[str | Path]) -> list[str]:
    """The rounds the ``paths`` that are not there name (:func:`round_typed_as_path`), in
    order, each once."""
    return list(dict.fromkeys(r for p in paths if (r := round_typed_as_path(Path(p)))))


def round_hint(paths: Iterable[str | Path], *, takes_round: bool = True) -> str:
    """What a refusal of paths that are not there adds where they name rounds: ``(a round?
    give it with --round v5.0)``, several each as --round takes them (``(rounds? give them
    with --round v5.0 --round v4.1)``); where the command takes no ``--round`` (``advise
    --bench v5.0``), the command that reads them (``(a round? `gpuscale analyze --round
    v5.0` reads it)``); "" where none names a round."""
    rounds = rounds_typed_as_paths(paths)
    if not rounds:
        return ""
    given = [word for name in rounds for word in ("--round", name)]
    what, it = ("a round", "it") if len(rounds) == 1 else ("rounds", "them")
    if not takes_round:
        return f" ({what}? {suggested_command('analyze', *given)} reads {it})"
    return f" ({what}? give {it} with {' '.join(given)})"


def ingest_refusal(paths: list[str] | None, round_name: str | None) -> str | None:
    """Why ``gpuscale ingest`` reads nothing of ``paths``, None where it reads them: none
    given (its ``--round`` names a PATH's round and fetches nothing; ``gpuscale dataset
    --round`` takes a round by name), a round's name where its folder goes (every such
    path's), or one round name for several paths (an empty one is refused as the command
    line is parsed: ``tables.command_line.refused_at_parse``)."""
    if not paths:
        named = f" --round {round_name}" if round_name else ""
        return (
            "ingest reads the round folders or archives given as PATH (none given); its "
            f"--round names a PATH's round and fetches nothing: `gpuscale dataset{named}` "
            "writes a bundled or published round's tables"
        )
    if round_name and len(paths) > 1:
        return "--round-name applies to one path at a time"
    if rounds := rounds_typed_as_paths(paths):  # a round typed by name where its folder goes
        typed = [quoted_path(p) for p in paths if round_typed_as_path(Path(p))]
        given = [word for name in rounds for word in ("--round", name)]
        what = "a bundled or published round's" if len(rounds) == 1 else "those rounds'"
        return (
            f"{', '.join(typed)}: no such file or directory; ingest reads a round's folder or "
            f"archive: {suggested_command('dataset', *given)} writes {what} tables"
        )
    return None


@dataclass(frozen=True, kw_only=True, slots=True)
class DatasetOut(FolderOut):
    """Where ``gpuscale dataset`` writes the dataset."""

    holds: ClassVar[str] = DATASET
    out: Path = folder_out_option(Path("gpuscale-dataset"), "the dataset")
