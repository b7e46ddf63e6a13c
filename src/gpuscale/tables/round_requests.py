"""The requests of the commands over MLPerf rounds, each option written once: which rounds
and workloads a command reads (:class:`RoundSelection`, shared by ``scores``, ``analyze``,
``energy``, ``trends``, ``report``, ``dataset`` and ``plan``) and what ``scores`` shows
(:class:`ScoresOptions`). Pure Python: the CLI imports them at start."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gpuscale.tables.requests import argument, option, repeatable_option


@dataclass(frozen=True, kw_only=True, slots=True)
class RoundSelection:
    """``paths``: raw round folders or archives, read now; ``round_names``: bundled rounds,
    added beside them; ``benchmark``: the workloads asked (names as people type them,
    resolved against the tables read: ``gpuscale.names.choose_workloads``)."""

    paths: tuple[Path, ...] | None = argument(
        help="Round directories or archives (.tar, .tar.gz, .tar.xz, .zip); "
        "default: the bundled rounds."
    )
    round_names: tuple[str, ...] | None = repeatable_option(
        str,
        names=("--round",),
        help="Bundled round(s), e.g. v4.1 (repeatable); with paths, added beside them (a "
        "path whose name says no round takes the first --round as its name).",
    )
    benchmark: tuple[str, ...] | None = repeatable_option(
        str,
        names=("--benchmark", "-b", "--workload"),  # --workload as plan and advise spell it
        help="Benchmark or workload name(s); 'study' for the study's four.",
    )

    @property
    def asked(self) -> bool:
        """Whether any round was asked for (paths or bundled names)."""
        return bool(self.paths or self.round_names)


@dataclass(frozen=True, kw_only=True, slots=True)
class ScoresOptions:
    """What the scores table shows (``gpuscale.tables.views.scores_view``)."""

    all_columns: bool = option(
        False, names=("--all-columns",), help="Every column of the scores table."
    )
    duplicates: bool = option(
        False,
        names=("--duplicates",),
        help="Also list a result under its second system name in a round (the same runs, "
        "e.g. a -POWER twin); shown once by default.",
    )
