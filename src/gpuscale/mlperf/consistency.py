"""Checks across a round's files: a log that says it belongs to another result (reported,
counted as the official summarizer counts it), and folder names that look alike."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from gpuscale.quantities import article, joined
from gpuscale.tables import ProblemKind, Row

if TYPE_CHECKING:
    import pandas as pd

Problem = Callable[[str, str, str], None]  # (path, kind, message): adds a problems row


def _scripts(name: str) -> set[str]:
    """The scripts of a name's letters (``LATIN``, ``CYRILLIC``, ``GREEK``...: the first
    word of each letter's Unicode name)."""
    return {unicodedata.name(c, "?").split()[0] for c in name if c.isalpha()}


class FolderNames:
    """Organisation and system folder names as shown: NFKC-normalised (a fullwidth or
    ligature letter is the letter), invisible and bidirectional control characters
    (Unicode category Cf: zero-width space, right-to-left override) written as visible
    ``<U+200B>``; each changed name is reported once, and so is a name mixing scripts
    (a Cyrillic letter among Latin ones looks like another name)."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        self.done: dict[str, str] = {}

    def name(self, raw: str, where: str) -> str:
        if raw.isascii():
            return raw
        if raw not in self.done:
            clean = "".join(
                f"<U+{ord(c):04X}>" if unicodedata.category(c) == "Cf" else c
                for c in unicodedata.normalize("NFKC", raw)
            )
            self.done[raw] = clean
            scripts = _scripts(clean)
            if len(scripts) > 1:
                self.problem(
                    clean,
                    ProblemKind.BAD_FIELD,
                    f"the {where} folder name {clean!r} mixes {joined(sorted(scripts))} "
                    "letters: it may look like another name",
                )
            if clean != raw:
                said = f"the {where} folder name {raw!r} is shown as {clean!r}"
                if "<U+" in clean:
                    said += " (invisible or direction-changing characters)"
                self.problem(clean, ProblemKind.BAD_FIELD, f"{said} (Unicode NFKC)")
        return self.done[raw]

    def path(self, rel: str) -> str:
        parts = rel.split("/")
        parts[0] = self.name(parts[0], "organisation")
        if len(parts) > 2 and parts[1] in ("results", "systems"):
            stem, dot, ext = (
                parts[2].rpartition(".") if parts[1] == "systems" else (parts[2], "", "")
            )
            parts[2] = self.name(stem, "system") + dot + ext
        return "/".join(parts)


def odd_logs_reported(
    rows: list[Row], divisions: dict[tuple[str, str], str], problem: Problem
) -> dict[tuple[str, str, str], str]:
    """Report a log that names another benchmark than its folder, another submitter or
    system than most logs of its folder, or another division than its system description;
    count it as the official summarizer does. The official tool checks each file against
    the rules of the benchmark and division the file itself names and never compares a
    log with its folder, so a rule dropping such a file would change an official score
    (v2.0 H3C ``R5300G5x4A100-SXM-80GB`` unet3d: 2 of 40 logs name the submitter
    'nvidia', left from the reference code; MLCommons counts all 40, 51.070 min).
    ``divisions``: (org, system id) -> the system description's division. Returns, for
    each result (org, system id, benchmark) with a log of another benchmark or division,
    why (its ``log_flag``: counted in scores, kept out of analyses)."""
    flags: dict[tuple[str, str, str], str] = {}
    folders: dict[tuple[str, str, str], list[Row]] = {}
    for r in rows:
        folders.setdefault((r["org"], r["system_id"], r["benchmark"]), []).append(r)
    for (org, system_id, benchmark), runs in folders.items():
        found: dict[int, list[str]] = {}
        declared = divisions.get((org, system_id)) or None
        other: Counter[str] = Counter()
        for r in runs:
            said, division = r.get("log_benchmark"), r.get("log_division")
            if said is not None and said != benchmark:
                found.setdefault(id(r), []).append(
                    f"the log is {article(str(said))} {said!r} run, in the {benchmark!r} folder"
                )
                other[f"{said!r} runs in the {benchmark!r} folder"] += 1
            if declared and division is not None and str(division).lower() != declared:
                found.setdefault(id(r), []).append(
                    f"the log's division {division!r} differs from its system "
                    f"description's ({declared!r})"
                )
                other[f"{division!r} division runs of {article(declared)} {declared!r} system"] += 1
        if other:
            flags[(org, system_id, benchmark)] = "its logs contradict their folder: " + "; ".join(
                f"{n:,} of {len(runs):,} logs are {what}" for what, n in other.items()
            )
        for name, what in (("log_org", "submitter"), ("log_platform", "system")):
            _minority(runs, name, what, found)
        for r in runs:
            for message in found.get(id(r), []):
                problem(
                    r["rel"],
                    ProblemKind.INCONSISTENT_LOG,
                    f"{message}; counted, as the official summarizer counts it",
                )
    return flags


def log_flags(scores: pd.DataFrame, contradicted: dict[tuple[str, str, str], str]) -> list[str]:
    """Each score row's ``log_flag``: why its logs contradict their folder
    (:func:`odd_logs_reported`'s reasons), "" where they agree."""
    keys = zip(scores["org"], scores["system_id"], scores["benchmark"], strict=True)
    return [contradicted.get(key, "") for key in keys]


def _minority(runs: list[Row], name: str, what: str, found: dict[int, list[str]]) -> None:
    """Add to ``found`` the logs of a folder whose ``name`` (the log's submitter or
    system) is not the one most of its logs give (every log's, when no value leads),
    naming the folder as it lies in the round (the logs' own names for the submitter or
    system need not be the folder's)."""
    votes = Counter(r.get(name) for r in runs if r.get(name) is not None)
    if len(votes) < 2:
        return
    (top, n), (_, m) = votes.most_common(2)
    for r in runs:
        if r.get(name) is None or (r[name] == top and n > m):
            continue
        others = ", ".join(repr(v) for v in votes if v != r[name])
        folder = r["rel"].rpartition("/")[0]  # the folder to open, not a name from a log
        found.setdefault(id(r), []).append(
            f"the log's {what} {r[name]!r} differs from what the other logs in {folder} "
            f"give ({others})"
        )
