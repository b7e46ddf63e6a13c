"""The rounds a command asked for, as one set of tables: raw paths read now (a folder that
holds no results says why, and what to give instead) beside rounds named: bundled ones
from the package's tables, any other round MLCommons published from the cache, fetched
there first from its public repository (``gpuscale.sources.fetch``; never ``offline``).

Prints nothing; a request that cannot be served raises :class:`NoResultsError` (a path
with no MLPerf results), :class:`RoundNamesError` (round names that do not fit the paths,
a round that is none, one not in the cache ``offline``) or ``SourceError`` (a path that
cannot be read at all, a round that cannot be fetched: ``FetchError``), each with a
message for people.

A raw round read is kept in the user's cache (``$XDG_CACHE_HOME/gpuscale/tables``,
``gpuscale.sources.disk_cache``), keyed by the source's identity (path, sizes and
modification times), the round name and the code: the same archive read again by any
command takes milliseconds where its logs took seconds to parse; a changed file, name or
line of code reads it afresh.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from gpuscale.mlperf import bundled
from gpuscale.mlperf.bundled import bundled_rounds
from gpuscale.mlperf.duplicates import combine
from gpuscale.mlperf.ingest import Progress, read_round, round_to_read
from gpuscale.mlperf.layout import normalise_round, round_name_from_path, round_name_of
from gpuscale.mlperf.no_results import NoResultsError
from gpuscale.quantities import agreeing, counted, filled, joined
from gpuscale.sources import SourceError
from gpuscale.sources.disk_cache import Cache, default_folder, source_identity
from gpuscale.sources.fetch import cache_folder, cached, fetch_round, folder_of, round_url
from gpuscale.tables import ProblemKind, RoundTables, problem_row
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.inputs import missing_input, missing_results, refuse_missing
from gpuscale.tables.raw_rounds import archive_stem, is_archive
from gpuscale.tables.refusals import NamedError, ref
from gpuscale.tables.round_requests import RoundSelection, round_hint, round_typed_as_path
from gpuscale.tables.spelling import did_you_mean
from gpuscale.tables.workloads import (
    PUBLISHED,
    RENAMED,
    STUDY_ROUND,
    WORKLOADS,
    own_label,
    round_key,
    round_name,
    round_names_known,
    rounds_read_as,
)


class RoundNamesError(NamedError):
    """Round names that do not fit the paths given, or a round neither bundled nor
    published (nor in the cache, offline); a request field it names is said as the reader
    gives it (:func:`~gpuscale.tables.refusals.ref`: ``--offline`` or ``offline=True``)."""


def read_paths(
    paths: Sequence[Path],
    round_names: Sequence[str | None] | None = None,
    *,
    progress: Progress | None = None,
    benchmark_option: str | None = "-b",
    on_note: Callable[[str], None] | None = None,
) -> RoundTables:
    """Raw rounds read and stacked; ``round_names`` name the paths' rounds (one for all, or
    one each; none: read from each path's name). A path that is no round raises; one that
    does not exist and reads like a benchmark name is said to be one, given by
    ``benchmark_option`` (None: the command takes no benchmark). ``on_note`` is given how
    each round name typed otherwise than named was read (``'4.1' read as v4.1``)."""
    names = list(round_names or [])
    for said in rounds_read_as(names) if on_note is not None else ():
        on_note(said)
    if names and len(names) not in (1, len(paths)):
        raise RoundNamesError(
            f"{len(names)} --round names for {len(paths)} paths: give one per path, one for "
            "all, or none (the round is then read from each path's name)"
        )
    if len(names) <= 1:  # one name for every path, or none: each path's own
        names = (names or [None]) * len(paths)
    # every path that is not there said at once, before the others are read
    if said := missing_rounds(paths, benchmark_option):
        raise SourceError("; ".join(said))
    parts = []
    for path, name in zip(paths, names, strict=True):
        try:  # a path with no results: read_round says why (NoResultsError)
            part = cached_round(path, name, progress)
        except NoResultsError:
            raise
        except (SourceError, ValueError) as exc:
            raise _refused(exc, path, paths, benchmark_option) from exc
        label = round_label(path, name)
        part = part if label == name else _labelled(part, label)
        parts.append(as_published(part, path))
    return combine(parts)


def as_published(part: RoundTables, path: Path) -> RoundTables:
    """``part``, one round read from ``path``; where its name is a bundled round's and its
    scores are not as that round's bundled tables hold them (``published_copy``), listed
    as the user's own folder with a ``not as published`` problem saying why."""
    read_as = part.rounds[0] if len(part.rounds) == 1 else None
    if read_as is None or read_as not in bundled_rounds():
        return part
    # lazy: pandas, as the rounds' reading (a path's round is told without it)
    import pandas as pd

    # lazy: its tables are pandas'
    from gpuscale.mlperf.published_copy import RESULT_KEY, differences, not_as_published

    published = bundled.load_round(read_as).scores
    differing = differences(part.scores, published)
    if differing.empty:
        return part
    label = own_label(_folder_name(path), read_as)
    shared = len(part.scores.merge(published[RESULT_KEY], on=RESULT_KEY))
    said = not_as_published(differing, shared, read_as)
    problem = pd.DataFrame([problem_row(label, path.name, ProblemKind.NOT_AS_PUBLISHED, said)])
    mine = _labelled(part, label)
    return replace(mine, problems=pd.concat([problem, mine.problems], ignore_index=True))


def round_label(path: Path, name: str | None) -> str | None:
    """The round ``path``'s results are listed under, read by round ``name`` (None: the
    round its name says): a path whose name says no round is the user's own folder,
    labelled by its folder name with the round beside it (``my-results (v4.1)``), so it
    is read beside the published round of that name (``tables.workloads.own_label``)."""
    if name is None or round_name_of(path) is not None:
        return name
    return own_label(_folder_name(path), normalise_round(name))


def _folder_name(path: Path) -> str:
    """The name a user's folder or archive is listed under: ``my results.tar.gz`` and
    ``my results/`` alike as ``my results``."""
    return archive_stem(Path(os.path.abspath(path)).name)


def _labelled(tables: RoundTables, label: str | None) -> RoundTables:
    """``tables`` (one round) with every row's round the ``label``."""
    return RoundTables(**{n: getattr(tables, n).assign(round=label) for n in tables.NAMES})


def missing_rounds(paths: Sequence[Path], benchmark_option: str | None = "-b") -> list[str]:
    """Why each of ``paths`` that is not there is no round, as :func:`read_paths` says it
    (one message each, the hint for rounds typed as paths once, after the last)."""
    said = []
    for path in paths:
        refusal = missing_input(path, _round_to_read, (SourceError, ValueError))
        if refusal is not None:
            said.append(str(_refused(SourceError(refusal), path, paths, benchmark_option)))
    hint = round_hint(paths)
    if hint and said and any(s.endswith(hint) for s in said):  # once, after the last
        said = [s.removesuffix(hint) for s in said]
        said[-1] += hint
    return said


def _round_to_read(path: Path) -> str:
    """The round ``path`` reads as, its name not given (a missing path: refused)."""
    return round_to_read(path, None)


def _refused(
    exc: Exception, path: Path, paths: Sequence[Path], benchmark_option: str | None
) -> Exception:
    """``exc`` (``path`` refused as a round) with what the user may have meant: a
    benchmark typed where a path goes (given by ``benchmark_option``), or a round typed by
    name (``round_hint`` of every path)."""
    if benchmark_option and _like_a_benchmark(path):
        # `gpuscale analyze brt`: a benchmark typed where a path goes
        hint = f"a benchmark? give it with {benchmark_option} {quoted_path(path)}"
        return SourceError(f"{exc} ({hint})")
    if round_typed_as_path(path):  # `gpuscale analyze v5.0 v4.1`: every round typed
        return SourceError(f"{exc}{round_hint(paths)}")
    return exc


# rounds kept read: ~1 MB each pickled, v0.7-v5.0 and a few of a user's own copies
ROUNDS_KEPT = 40


def cached_round(path: Path, name: str | None, progress: Progress | None) -> RoundTables:
    """``read_round(path, name)``, from the cache where the same source was read by the
    same code before (``progress`` is then never called), else read and kept there. A
    ``name`` that is the round the path's name says reads as none (``ingest A --round-name
    v4.0`` after ``scores A``, as a note suggests, is one read). The path as given is part
    of the key: the problems name it (a link's name, a relative path), and another
    spelling of the same source must not show the first one's."""
    round_to_read(path, name)  # a path refused at once is refused before its tree is listed
    if name is not None and normalise_round(name) == round_name_from_path(path):
        name = None  # the round its name says, given again: read as its own, one entry
    cache = Cache(default_folder("tables"), most=ROUNDS_KEPT)
    identity = source_identity(path)
    key = "" if identity is None else cache.key("read_round", identity, str(path), name)
    found = cache.get(key)
    if isinstance(found, RoundTables):
        return found
    tables = read_round(path, name, progress=progress)
    cache.put(key, tables)
    return tables


def _like_a_benchmark(path: Path) -> bool:
    """A name that is no path and close to a benchmark's (``brt``, ``bert``; not
    ``nosuch``)."""
    if path.exists() or len(path.parts) != 1 or path.suffix:
        return False
    names = [*WORKLOADS, *RENAMED, "study", "sd"]
    return bool(difflib.get_close_matches(path.name.lower(), names, n=1, cutoff=0.6))


# The rounds a study command (analyze, report) reads when given none: the study's.
STUDY_ROUNDS = (STUDY_ROUND,)


def load_rounds(
    paths: Sequence[Path] | None,
    round_names: Sequence[str] | None,
    *,
    default: Sequence[str] | None = None,
    progress: Progress | None = None,
    on_read: Callable[[RoundTables, dict[str, Path]], None] | None = None,
    offline: bool = False,
    on_note: Callable[[str], None] | None = None,
) -> RoundTables:
    """Tables from raw paths (read now) and rounds named: ``round_names`` names rounds
    added beside the paths (bundled, or fetched: :func:`named_rounds`); a path whose name
    says no round takes the first names as its round (one for all such paths, or one
    each). Given neither, the ``default`` bundled rounds (none: every bundled round).
    ``on_read`` is given the tables of the raw paths, and of each fetched round, read (their
    problems: what to tell the reader) with the path of each round in them; ``on_note``
    where a fetched round lies."""
    named = {"offline": offline, "progress": progress, "on_read": on_read, "on_note": on_note}
    if not paths:
        return named_rounds(list(round_names or default or []), **named)
    own, others = _split_round_names(list(paths), list(round_names or []))
    _one_copy_each(list(paths), own, others)
    others += _bundled_beside(list(paths), own, others)
    beside = named_rounds(others, **named) if others else None  # a name that is none: first
    tables = read_paths(paths, own, progress=progress)
    if on_read is not None:
        named_as = own * len(paths) if len(own) == 1 else own or map(round_name_of, paths)
        labels = [round_label(p, n) or n for p, n in zip(paths, named_as, strict=False)]
        on_read(tables, {str(n): p for n, p in zip(labels, paths, strict=False) if n})
    return combine([tables, beside]) if beside is not None else tables


def load_selection(
    selection: RoundSelection,
    *,
    study: bool = False,
    bench: Path | None = None,
    progress: Progress | None = None,
    on_read: Callable[[RoundTables, dict[str, Path]], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> RoundTables:
    """The tables a command's :class:`RoundSelection` asks for (:func:`load_rounds`; given
    neither paths nor rounds, every bundled round, or with ``study`` the study's,
    :data:`STUDY_ROUNDS`). ``bench``: the results file the command reads beside them
    (``--bench``): where it or any path is not there, each is said at once
    (:class:`~gpuscale.tables.inputs.MissingInputsError`) before a round is read or
    fetched. ``on_note`` is given, first, how each round name typed otherwise than named
    was read (``'4.1' read as v4.1``: never in silence)."""
    for said in selection.read_as if on_note is not None else ():
        on_note(said)
    refuse_missing([*missing_rounds(selection.paths or []), missing_results(bench)])
    return load_rounds(
        selection.paths,
        selection.round_names,
        default=STUDY_ROUNDS if study else None,
        progress=progress,
        on_read=on_read,
        offline=selection.offline,
        on_note=on_note,
    )


def published_rounds() -> list[str]:
    """The rounds of MLPerf Training MLCommons has published or has rules for (those
    mlperf-logging ships), oldest first: the names a round is fetched by."""
    return sorted(round_names_known(), key=round_key)


def load_round(*rounds: str, offline: bool = False) -> RoundTables:
    """The tables of the rounds named, read as ``--round`` reads them (``gpuscale.load_round``;
    a round as ``v4.1``, ``4.1`` or ``V4.1``; none: every bundled round): a bundled round
    from the package's tables, any other MLCommons published from the cache, fetched there
    first where it is not (:func:`named_rounds`; ``offline``: never, refused instead).
    Prints nothing. Raises ``TypeError`` for a name that is no string (or an ``offline``
    that is no bool), :class:`RoundNamesError`
    (a ``ValueError``) for a name that is no round published or, ``offline``, one not in
    the cache, and ``FetchError`` (a ``SourceError``) where a fetch fails."""
    for r in rounds:
        if not isinstance(r, str):
            hint = ""  # a path reads with read_round; several rounds are several arguments
            if isinstance(r, os.PathLike):
                hint = f": read_round({os.fspath(r)!r}) reads a round's folder or archive"
            elif isinstance(r, list | tuple) and r and all(isinstance(x, str) for x in r):
                hint = f": give each as its own argument, load_round({', '.join(map(repr, r))})"
            raise TypeError(
                f"rounds must be round names like 'v4.1', not {type(r).__name__} ({r!r}){hint}"
            )
    if not isinstance(offline, bool):  # offline="no" is truthy: never fetching, unasked
        raise TypeError(f"offline must be True or False, not {offline!r}")
    for r in rounds:  # a folder or archive: read_round reads it, as a command's path argument
        if round_name(r) is None and ("/" in r or os.sep in r or is_archive(r) or Path(r).exists()):
            raise RoundNamesError(
                f"not a round name: {r!r} (a folder or archive: read_round({r!r}) reads it)"
            )
    return named_rounds(list(rounds), offline=offline)


def named_rounds(
    round_names: list[str],
    *,
    offline: bool = False,
    progress: Progress | None = None,
    on_read: Callable[[RoundTables, dict[str, Path]], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> RoundTables:
    """The rounds named (none: every bundled round): the bundled ones from the package's
    tables, any other from the cache, fetched there first where it is not
    (``gpuscale.sources.fetch.fetch_round``; ``offline``: never, refused instead)."""
    try:
        wanted = list(dict.fromkeys(normalise_round(n) for n in round_names))
    except ValueError as exc:
        raise RoundNamesError(str(exc)) from None
    shipped = bundled_rounds()
    inside = [n for n in wanted if n in shipped]
    parts = [_bundled(inside)] if inside or not wanted else []
    for name in (n for n in wanted if n not in shipped):
        folder = _fetched(name, shipped, offline, progress, on_note)
        part = cached_round(folder, name, progress)
        if on_read is not None:
            on_read(part, {name: folder})
        parts.append(part)
    return combine(parts) if len(parts) > 1 else parts[0]


def _nearest_round(name: str, published: list[str], to_come: Sequence[str] = ()) -> str:
    """`` (did you mean 'v0.6'?)``: the published round nearest ``name`` as a version
    (``v0.5`` -> ``v0.6``, never ``v0.7`` for sharing more letters), else as text; one of
    ``to_come`` (rules known, results not known to be out) said so."""
    asked = round_key(name)
    if len(asked) != 2 or asked[1] > 9 or not published:  # v5.11: a typo of v5.1, as text
        return did_you_mean(name, published)

    def apart(round_name: str) -> tuple[int, int]:
        major, minor = (*round_key(round_name), 0, 0)[:2]
        return abs((major - asked[0]) * 10 + minor - asked[1]), -major

    meant = min(published, key=apart)
    if meant in to_come:
        return f" (did you mean {meant!r}, whose results may not be out?)"
    return f" (did you mean {meant!r}?)"


def _to_come(named: list[str], shipped: list[str]) -> list[str]:
    """The rounds of ``named`` (:func:`published_rounds`) known only by the rules the
    installed mlperf-logging has for them: not bundled, and not among the rounds whose
    results gpuscale knows MLCommons published (``tables.workloads.PUBLISHED``)."""
    return [r for r in named if r not in PUBLISHED and r not in shipped]


def _fetched(
    name: str,
    shipped: list[str],
    offline: bool,
    progress: Progress | None,
    on_note: Callable[[str], None] | None,
) -> Path:
    """The cache's folder of round ``name`` (not bundled), fetched first where needed."""
    published = published_rounds()
    bundled = ", ".join(shipped) or "none"
    if name not in published:
        to_come = _to_come(published, shipped)
        out = [r for r in published if r not in to_come]
        rules = filled(", and those mlperf-logging has rules for, {}", joined(to_come))
        raise RoundNamesError(
            f"round {name} not bundled, nor a round gpuscale fetches by name"
            f"{_nearest_round(name, published, to_come)}: bundled {bundled}; fetched by "
            f"name: the rounds MLCommons published, {out[0]} to {out[-1]}{rules}; a "
            "round's results folder or archive is read as a path"
        )
    cache = cache_folder()
    found = cached(name, cache)
    if found is None and offline:
        raise RoundNamesError(
            f"round {name} is not bundled ({bundled}) nor in the cache "
            f"({folder_of(name, cache)}), and {ref('offline', True)} fetches nothing: "
            f"leave it out to fetch the round from {round_url(name)}, or give its results "
            "folder or archive as a path"
        )
    found = found or fetch_round(name, cache=cache, progress=progress)
    if on_note is not None:
        on_note(found.said())
    return found.path


def _bundled_beside(paths: list[Path], own: list[str], others: list[str]) -> list[str]:
    """The bundled rounds whose rules read a user's own folder (a path whose name says no
    round, named by ``own``), added beside it to compare with, unless given already (by
    name, or as a path); a round not bundled is not fetched for it."""
    if not own:
        return []
    named_as = own * len(paths) if len(own) == 1 else own
    given = {round_name_of(p) for p in paths} | {round_name(n) for n in others}
    shipped, added = bundled_rounds(), []
    for path, name in zip(paths, named_as, strict=True):
        wanted = round_name(name)
        if round_name_of(path) is None and wanted in shipped and wanted not in given:
            added.append(wanted)
            given.add(wanted)
    return added


def _one_copy_each(paths: list[Path], own: list[str], named: list[str]) -> None:
    """Refuse a round given both as a path and as a ``--round`` beside it, before anything
    is read or fetched: merged, one copy's results would replace the other's without a
    word. A path whose name says no round is listed under its own label
    (:func:`round_label`): the round of that name is read beside it."""
    if len(own) == len(paths):
        said = own  # one name each
    elif len(own) == 1:
        said = own * len(paths)  # one name for every path
    else:
        said = [round_name_of(p) for p in paths]
    wanted = {round_name(n) for n in named}
    for path, name in zip(paths, said, strict=True):
        if name is None or (r := round_name(name)) not in wanted:
            continue
        if round_name_of(path) is None:  # the user's own folder, labelled: beside the round
            continue
        how = f"whose name says {r}"
        if round_name_from_path(path) is None:  # a renamed copy: its one folder says it
            how = f"whose folder inside says {r}"
        adds = "the bundled tables"
        if r not in bundled_rounds():
            adds = "the round fetched by name"
        raise RoundNamesError(
            f"round {r} given both as a path ({quoted_path(path)}, {how}) and as --round "
            f"{r}, which beside such a path adds {adds}: give one (drop --round to read the "
            "path alone)"
        )


def _bundled(round_names: list[str]) -> RoundTables:
    try:
        return bundled.load_round(*round_names)  # the package's tables alone
    except (KeyError, ValueError) as exc:
        raise RoundNamesError(str(exc)) from exc


def _split_round_names(paths: list[Path], names: list[str]) -> tuple[list[str], list[str]]:
    """(the names of the paths' rounds, the rounds to add by name: bundled or fetched).
    Paths whose names say their round need none: every ``--round`` is then one to add."""
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
        own = [round_name_of(p) or next(given) for p in paths]  # the unnamed in order
        return [str(n) for n in own], names[len(unnamed) :]
    if len(names) == 1:
        return names, []
    return names[: len(paths)], names[len(paths) :]
