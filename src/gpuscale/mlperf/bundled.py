"""The rounds shipped with gpuscale, distilled by its own ingest from the raw results.

``load_round("v4.1")`` reads the compact Parquet tables in ``gpuscale/data`` (no raw
logs needed). ``python -m gpuscale.mlperf.bundled DIR`` rebuilds them from the
``training_results_v*.tar.xz`` archives in DIR (e.g. ``../shared/mlperf``).
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import pandas as pd

from gpuscale.mlperf.duplicates import same_runs_problems
from gpuscale.mlperf.ingest import read_rounds
from gpuscale.mlperf.layout import normalise_round, round_name_from_path
from gpuscale.mlperf.shipped import DATA_DIR, bundled_rounds
from gpuscale.quantities import joined, noun_for
from gpuscale.sources import OutputError, check_owner, write_atomically
from gpuscale.sources.atomic import replacing
from gpuscale.tables import PROBLEMS_SCHEMA, ProblemKind, RoundTables, frame_of, round_key
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.republished import mark_copies
from gpuscale.tables.round_requests import ingest_refusal
from gpuscale.tables.spelling import did_you_mean
from gpuscale.tables.written import write_table

TABLES = RoundTables.NAMES


def bundled_workloads() -> dict[str, list[str]]:
    """Each bundled round's workloads (cross-round names), rounds oldest first."""
    path = DATA_DIR / "scores.parquet"
    if not path.exists():
        return {}
    frame = pd.read_parquet(path, columns=["round", "workload"]).dropna()
    held = frame.groupby("round")["workload"].agg(lambda w: sorted(set(w))).to_dict()
    return {r: held[r] for r in sorted(held, key=round_key)}


class RoundNotBundledError(KeyError):
    """A round asked of the bundled data that it does not hold. A KeyError (callers catch
    one) whose str is the message itself, not KeyError's quoted repr."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def load_round(*rounds: str) -> RoundTables:
    """The bundled tables of the given rounds (all bundled rounds when none given; a
    round as ``v4.1``, ``4.1`` or ``V4.1``).

    Raises :class:`RoundNotBundledError` (a KeyError) naming the bundled rounds when one
    is not bundled.
    """
    for r in rounds:
        if not isinstance(r, str):
            raise TypeError(
                f"rounds must be round names like 'v4.1', not {type(r).__name__} ({r!r})"
            )
    available = bundled_rounds()
    wanted = [normalise_round(r) for r in rounds] or available
    missing = [r for r in wanted if r not in available]
    if missing:
        said = f"{noun_for(len(missing), 'round')} {joined(missing)} not bundled"
        if len(missing) == 1:
            said += did_you_mean(missing[0], available)
        raise RoundNotBundledError(
            f"{said}; bundled: {', '.join(available) or 'none'} (a round's raw results, its "
            "folder or archive, are read as a path: `gpuscale analyze PATH` on the command "
            "line, read_round(path) from Python)"
        )
    stamps = tuple((DATA_DIR / f"{name}.parquet").stat().st_mtime_ns for name in TABLES)
    read = _read_tables(tuple(wanted), stamps)
    # a copy each call: a caller may change its tables; the one read stays as shipped
    return RoundTables(**{name: getattr(read, name).copy() for name in TABLES})


@functools.lru_cache(maxsize=8)
def _read_tables(wanted: tuple[str, ...], stamps: tuple[int, ...]) -> RoundTables:
    """The bundled tables of ``wanted``, read once per process while the files' modification
    times (``stamps``, part of the cache's key) stay the same: reading and marking the
    republished results takes most of a second, and advise reads them each time."""
    frames = {}
    for name in TABLES:
        table = pd.read_parquet(DATA_DIR / f"{name}.parquet")
        frames[name] = table[table["round"].isin(wanted)].reset_index(drop=True)
    # Republished results are marked over the rounds loaded, not over every bundled one
    # (results under two names within a round are marked too: same_runs_as, and their
    # `same runs` problems said of the rows as marked now, not as when the data shipped).
    frames["scores"] = mark_copies(frames["scores"], frames["runs"])
    problems = frames["problems"]
    frames["problems"] = pd.concat(
        [
            problems[problems["kind"] != str(ProblemKind.SAME_RUNS)],
            frame_of(PROBLEMS_SCHEMA, same_runs_problems(frames["scores"])),
        ],
        ignore_index=True,
    )
    return RoundTables(**frames)


def write_tables(tables: RoundTables, out_dir: Path, *, csv: bool = True) -> list[Path]:
    """Write the four tables as Parquet (and CSV) files into ``out_dir``, all at once
    (``gpuscale.sources.write_atomically``: never half-written). Raises ``OutputError``,
    also where ``out_dir`` holds the tables of a round these lack (they would be lost)."""

    def write(folder: Path) -> None:
        for name in TABLES:
            write_table(getattr(tables, name), folder, name, csv=csv)

    return [
        p
        for p in write_atomically(out_dir, write, command="ingest", sources=tables.rounds)
        if p.suffix in (".parquet", ".csv")
    ]


def ingest_refused(paths: list[str] | None, round_name: str | None, out_dir: Path) -> str | None:
    """Why ``gpuscale ingest`` reads nothing of ``paths`` (``round_requests.ingest_refusal``),
    or would write nothing into ``out_dir``: it holds the tables of a round that the rounds
    the paths' names (or ``round_name``) say leave out (:func:`~gpuscale.sources.check_owner`,
    said before a round is read; again as they are written, with the rounds read). None
    where it reads them."""
    if said := ingest_refusal(paths, round_name):
        return said
    try:
        named = [normalise_round(round_name)] if round_name else []
    except ValueError:  # the reader says why
        return None
    rounds = named or [round_name_from_path(p) for p in paths or ()]
    if None in rounds:  # a round its name does not say: known once read
        return None
    try:
        check_owner(out_dir, "ingest", [r for r in rounds if r])
    except OutputError as refused:
        return str(refused)
    return None


def write_ingested(tables: RoundTables, out_dir: Path) -> str:
    """:func:`write_tables` (CSV too), and what it wrote, in a sentence that says the
    tables of an earlier ingest there it replaced (``wrote 8 files to 'out/', replacing its
    tables of v5.0``). Raises ``OutputError``."""
    replaced = replacing(out_dir, "ingest", "tables")
    written = write_tables(tables, out_dir)
    return f"wrote {len(written)} files to {quoted_path(f'{out_dir}/')}{replaced}"


# The rounds shipped: those the study's workloads span (v1.1 and older are read from raw).
BUNDLED_ROUNDS = ("v3.0", "v3.1", "v4.0", "v4.1", "v5.0")


def rebuild(source_dir: Path, out_dir: Path = DATA_DIR) -> RoundTables:
    """Re-distil the ``training_results_v*`` archives of ``BUNDLED_ROUNDS`` in
    ``source_dir`` into ``out_dir``."""
    archives = [
        p
        for p in sorted(source_dir.glob("training_results_v*.tar*"))
        if round_name_from_path(p) in BUNDLED_ROUNDS
    ]
    if not archives:
        raise FileNotFoundError(
            f"no training_results_v*.tar* archives in {quoted_path(source_dir)}"
        )
    tables = read_rounds(archives)
    for name in TABLES:  # the package's own folder: plain files, no manifest
        getattr(tables, name).to_parquet(
            out_dir / f"{name}.parquet", index=False, compression="zstd"
        )
    return tables


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("../shared/mlperf")
    result = rebuild(source)
    print(
        f"bundled {result.scores['round'].nunique()} rounds: {len(result.systems)} systems,"
        f" {len(result.runs)} runs, {len(result.scores)} scores into {DATA_DIR}"
    )
