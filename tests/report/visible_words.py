"""Words a reader sees on a report page without opening anything: the text of the HTML
less ``<head>``, ``<script>``, ``<style>`` and the figures' ``<svg>`` (a figure's labels
are the figure's), and less the body of every ``<details>`` (its ``<summary>`` counted,
as it shows when collapsed). A word is a run of non-space characters."""

from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

HIDDEN = {"head", "script", "style", "svg", "details"}
VOID = {"br", "meta", "link", "img", "input", "hr", "col", "source", "wbr"}


@dataclass(frozen=True, slots=True)
class VisibleWords:
    before_first_figure: int
    total: int


class _Counter(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, int]] = []  # (tag, how it changed ``hidden``)
        self.hidden = 0
        self.words = 0
        self.before_figure: int | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag in VOID:  # no end tag: nothing to push
            return
        if self.before_figure is None and tag in ("figure", "svg"):
            self.before_figure = self.words
        if tag == "summary" and self.stack and self.stack[-1][0] == "details":
            change = -1  # a collapsed section's summary shows
        else:
            change = 1 if tag in HIDDEN else 0
        self.stack.append((tag, change))
        self.hidden += change

    def handle_startendtag(self, tag: str, attrs: list) -> None:
        """``<path/>``: no content, nothing to push."""

    def handle_endtag(self, tag: str) -> None:
        if not any(t == tag for t, _ in self.stack):
            return
        while self.stack:
            name, change = self.stack.pop()
            self.hidden -= change
            if name == tag:
                return

    def handle_data(self, data: str) -> None:
        if self.hidden <= 0:
            self.words += len(re.findall(r"\S+", data))


def visible_words(html: str) -> VisibleWords:
    """The page's visible words before its first figure and in all (module docstring)."""
    counter = _Counter()
    counter.feed(html)
    counter.close()
    before = counter.words if counter.before_figure is None else counter.before_figure
    return VisibleWords(before, counter.words)
