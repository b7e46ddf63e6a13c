"""Checks across a round's files: a log that belongs to another result, and folder
names that look alike."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable
from typing import Any

from gpuscale.tables import ProblemKind, RunStatus

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
                    f"the {where} folder name {clean!r} mixes {' and '.join(sorted(scripts))} "
                    "letters: it may look like another name",
                )
            if clean != raw:
                hidden = "<U+" in clean
                self.problem(
                    clean,
                    ProblemKind.BAD_FIELD,
                    f"the {where} folder name {raw!r} is shown as {clean!r}"
                    + (" (invisible or direction-changing characters)" if hidden else "")
                    + " (Unicode NFKC)",
                )
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


def odd_logs_out(rows: list[dict[str, Any]], problem: Problem) -> None:
    """A log that says another benchmark than its folder's, or another submitter than
    most logs of its folder, is not counted: it belongs to another result (the official
    checker takes each folder as one result). Where no submitter is held by more logs
    than any other, every log of the folder is held back. Another system than most is
    reported but counted: a published v4.0 result (JuniperNetworks llama2_70b_lora) has
    one log saying 'A100' among 'H100's, and the official summarizer counts it."""
    folders: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in rows:
        folders.setdefault((r["org"], r["system_id"], r["benchmark"]), []).append(r)
    for (_, _, benchmark), runs in folders.items():
        odd: dict[int, str] = {}
        for r in runs:
            said = r.get("log_benchmark")
            if said is not None and said != benchmark:
                odd[id(r)] = f"the log is a {said!r} run, in the {benchmark!r} folder"
        for name, what in (("log_org", "submitter"), ("log_platform", "system")):
            votes = Counter(r.get(name) for r in runs if r.get(name) is not None)
            if len(votes) < 2:
                continue
            (top, n), (_, m) = votes.most_common(2)
            for r in runs:
                if r.get(name) is None or (r[name] == top and n > m):
                    continue
                others = ", ".join(repr(v) for v in votes if v != r[name])
                message = f"the log's {what} {r[name]!r} differs from its folder's ({others})"
                if what == "system":
                    problem(r["rel"], ProblemKind.BAD_FIELD, f"{message}; still counted")
                else:
                    odd.setdefault(id(r), message)
        for r in runs:
            if id(r) in odd and r.get("counted"):
                r.update(counted=False, status=str(RunStatus.NONCOMPLIANT), problem=odd[id(r)])
                problem(r["rel"], RunStatus.NONCOMPLIANT, f"{odd[id(r)]}; not counted")
