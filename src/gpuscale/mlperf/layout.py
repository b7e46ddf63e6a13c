"""Where things lie in a published MLPerf Training results tree, and round names.

``<org>/systems/<system>.json``, ``<org>/results/<system>/<benchmark>/result_*.txt``,
optional ``scaling.json`` beside the results, and power logs in
``<benchmark>/power/<result stem>/{node,sw}_*.txt``; the whole under an optional top
folder ``training_results_vX.Y``.
"""

from __future__ import annotations

import fnmatch
import os
import re
from pathlib import Path

from gpuscale.mlperf.rules import unheld_round
from gpuscale.sources import (
    Layout,
    RoundNotSaidError,
    SourceError,
    is_archive,
    top_folder,
)
from gpuscale.sources.archives import READ_AGAIN
from gpuscale.tables.commands import quoted_path
from gpuscale.tables.raw_rounds import archive_stem
from gpuscale.tables.workloads import STUDY_ROUND, round_name, round_name_meant

# What a second copy's name ends with: a browser's second download (``name (1).zip``),
# a file manager's copy (``name - Copy``, ``name copy 2``)
COPY = r"(?: \(\d+\)| - [Cc]opy(?: \(\d+\))?| [Cc]opy(?: \d+)?)?"
# The top folder: ``training_results_v5.1``, or as GitHub's "Download ZIP" names it after
# the branch or tag (``training_results_v5.1-main``, ``-master``), either as a copy's
TOP = re.compile(rf"^training_results_v?\d+\.\d+(?:-[A-Za-z0-9._]+)?{COPY}$")


def wanted(rel: str) -> bool:
    """Whether gpuscale reads this round-relative path."""
    parts = rel.split("/")
    if len(parts) == 3 and parts[1] == "systems":
        return parts[2].endswith(".json")
    if len(parts) >= 5 and parts[1] == "results":
        name = parts[-1]
        if len(parts) == 5:
            return fnmatch.fnmatchcase(name, "result_*.txt") or name == "scaling.json"
        # <org>/results/<system>/<benchmark>/power/<run stem>/<node|sw>_*.txt
        return len(parts) == 7 and parts[4] == "power" and name.endswith(".txt")
    return False


def is_benchmark_dir(rel: str) -> bool:
    """``<org>/results/<system>/<benchmark>``: reported even when it holds no result."""
    parts = rel.split("/")
    return len(parts) == 4 and parts[1] == "results"


def misplaced(rel: str, is_dir: bool) -> str | None:
    """A file where the layout has a folder (``<org>/results`` or ``<org>/systems``)."""
    parts = rel.split("/")
    if len(parts) == 2 and parts[1] in ("results", "systems") and not is_dir:
        return "a file where the results layout has a folder; not read"
    return None


# What MLCommons' summarizer reads of a result: ``glob("<benchmark>/result_*.txt")``
# (mlperf_logging.result_summarizer), case as written; gpuscale reads the same files.
READ_BY_SUMMARIZER = "MLCommons' summarizer reads only <benchmark>/result_*.txt"


def unread(rel: str) -> str | None:
    """Why a file named like a run log is not read where neither tool reads it, or None:
    under ``<org>/results`` one named ``result...`` or ``*.log`` off the
    ``<benchmark>/result_*.txt`` place and name, elsewhere one named ``result_*.txt``
    (``<org>/result/...``). Its run is not counted, so it is said."""
    parts = rel.split("/")
    name = parts[-1].lower()
    if wanted(rel) or not (name.startswith("result") or name.endswith(".log")):
        return None
    if len(parts) < 4 or parts[1] != "results":
        if not fnmatch.fnmatchcase(parts[-1], "result_*.txt"):
            return None
        where = "outside <org>/results/<system>/<benchmark>/"
    elif len(parts) == 4:
        where = "outside any benchmark folder"
    elif len(parts) == 5:
        where = "off result_<n>.txt"
    elif parts[4] == "power":
        return None
    else:
        where = "below its benchmark folder"
    return f"named like a run log but {where}: {READ_BY_SUMMARIZER}; not read, no run counted"


MLPERF_LAYOUT = Layout(
    wanted=wanted, marked=is_benchmark_dir, misplaced=misplaced, top=TOP, unread=unread
)


def round_name_from_path(path: str | os.PathLike[str]) -> str | None:
    """``.../training_results_v4.1.tar.xz`` -> ``v4.1``, and GitHub's download names
    (``training_results_v5.1-main.zip``: the branch after the version) -> ``v5.1``, and
    a second copy's name (``training_results_v4.1 (1).zip``) -> ``v4.1``; None when the
    name has no version."""
    name = re.sub(rf"{COPY}$", "", archive_stem(Path(path).name))
    match = re.search(r"(?:^|[_\-])v(\d+\.\d+)(?:-[A-Za-z][A-Za-z0-9._]*)?$", name)
    match = match or re.fullmatch(r"v(\d+\.\d+)", name)
    if not match:
        return None
    return f"v{match.group(1)}"


def normalise_round(name: str) -> str:
    """``4.1``, ``v4.1``, ``V4.1``, ``4.1.0`` -> ``v4.1``."""
    found = round_name(name)  # the whole name: `4.1x`, `v4.1,v5.0` are none
    if found is None:
        meant = round_name_meant(name)
        said = f"did you mean {meant!r}?" if meant else "expected like v4.1"
        raise ValueError(f"not a round name: {name!r} ({said})")
    return found


def round_name_to_read(path: Path, given: str | None) -> str:
    if given:
        why = unheld_round(name := normalise_round(given))
        if why:
            raise SourceError(why)
        return name
    found = round_name_from_path(path)
    if found:
        return found
    if is_archive(path):  # a renamed download: the round is in its top folder's name
        top = top_folder(path)
        if top is None:  # the cause, not a round to give (an empty or broken archive)
            raise SourceError(
                f"{quoted_path(path)}: an empty or unreadable archive (no folder in it): "
                f"{READ_AGAIN}"
            )
        found = round_name_from_path(top)
        if found:
            return found
    if path.is_dir():
        for child in path.iterdir():
            found = round_name_from_path(child)
            if found and child.is_dir():
                return found
    from gpuscale.mlperf.shipped import example_round  # lazy: pandas, for a refusal only

    raise RoundNotSaidError(path, example_round(fallback=STUDY_ROUND))


def round_name_of(path: str | os.PathLike[str]) -> str | None:
    """The round a path's name (or its one ``training_results_vX.Y`` folder) says; None
    when it says none."""
    try:
        return round_name_to_read(Path(path), None)
    except (SourceError, OSError):
        return None
