"""Figures to files and to inline SVG with a hover tooltip on every data point.

A report draws each figure once, as SVG (inline in the page and written beside it); the
PNG (150 dpi) is drawn only when asked for (``gpuscale report --png``): it is the most
expensive of the three. :class:`FigureFiles` reuses a figure drawn by an earlier report
from the same inputs and code (:mod:`gpuscale.sources.disk_cache`).
"""

from __future__ import annotations

import io
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gpuscale.report.figures_common import NothingToDraw
from gpuscale.sources.disk_cache import Cache

if TYPE_CHECKING:
    from gpuscale.report.style import Chart

SVG_NS = "http://www.w3.org/2000/svg"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")


def chart_svg(chart: Chart, salt: str) -> str:
    """The chart as an ``<svg>`` element string, each scatter point given a ``<title>``
    (browsers show it on hover). ``salt`` keeps element ids unique across figures."""
    # lazy: matplotlib (~0.6 s), only in the process that draws (a report's figure worker)
    import matplotlib

    # lazy: the figure style imports matplotlib, as above
    from gpuscale.report.style import STYLE

    buffer = io.StringIO()
    with matplotlib.rc_context({**STYLE, "svg.hashsalt": salt}):
        chart.figure.savefig(buffer, format="svg", metadata={"Date": None})
    root = ET.fromstring(buffer.getvalue())
    for group in root.iter(f"{{{SVG_NS}}}g"):
        labels = chart.labels.get(group.get("id", ""))
        if labels is None:
            continue
        points = [el for el in group.iter() if el.tag in (f"{{{SVG_NS}}}path", f"{{{SVG_NS}}}use")]
        for element, text in zip(points, labels, strict=False):
            title = ET.SubElement(element, f"{{{SVG_NS}}}title")
            title.text = text  # ElementTree escapes it: log text never becomes markup
    _salt_ids(root, salt)
    root.attrib.pop("width", None)
    root.attrib.pop("height", None)
    root.set("class", "figure")
    root.set("role", "img")
    if chart.figure.get_figwidth() > WIDE_IN:  # its own row (report.css): legible, not shrunk
        root.set("data-wide", "true")
    return ET.tostring(root, encoding="unicode")


def _salt_ids(root: ET.Element, salt: str) -> None:
    """Prefix every element id with ``salt`` and point each reference (``href="#id"``,
    ``url(#id)``) at the new id: matplotlib numbers its groups per figure (``figure_1``,
    ``axes_1``, ...), so two inline figures on one page would repeat ids, which HTML forbids
    and which makes a reference resolve in the wrong figure."""
    renamed = {}
    for element in root.iter():
        old = element.get("id")
        if old is not None:
            renamed[old] = f"{salt}-{old}"
            element.set("id", renamed[old])
    if not renamed:
        return
    reference = re.compile(r"(url\(#|^#)([^)\s]+)")

    def point(match: re.Match[str]) -> str:
        return match[1] + renamed.get(match[2], match[2])

    for element in root.iter():
        for name, value in element.attrib.items():
            if "#" in value and name != "id":
                element.set(name, reference.sub(point, value))


# A figure drawn wider than this (inches; the standard is 5.6) spans its section's row of
# figures: shrunk into one column, a wide bar chart's legend and labels could not be read.
WIDE_IN = 6.5


@dataclass(frozen=True, slots=True)
class Drawn:
    """A figure drawn: its inline SVG (with tooltips) and, when asked for, its PNG bytes."""

    svg: str
    png: bytes | None = None


def draw(chart: Chart, stem: str, *, png: bool = False, dpi: int = 150) -> Drawn:
    """Draw ``chart`` as SVG (ids salted with ``stem``) and, with ``png``, as PNG."""
    svg = chart_svg(chart, stem)
    if not png:
        return Drawn(svg)
    # lazy: matplotlib, as in chart_svg
    import matplotlib

    # lazy: the figure style imports matplotlib, as above
    from gpuscale.report.style import STYLE

    buffer = io.BytesIO()
    with matplotlib.rc_context(STYLE):
        # zlib level 1: a fifth of the encoding time for a file ~5% larger.
        chart.figure.savefig(
            buffer,
            format="png",
            dpi=dpi,
            metadata={"Software": "gpuscale"},
            pil_kwargs={"compress_level": 1},
        )
    return Drawn(svg, buffer.getvalue())


def write_drawn(drawn: Drawn, out_dir: Path, stem: str) -> list[Path]:
    """Write ``<stem>.svg`` (and ``<stem>.png`` when drawn) into ``out_dir``."""
    svg_file = out_dir / f"{stem}.svg"
    svg_file.write_text(
        f'<?xml version="1.0" encoding="utf-8"?>\n{_standalone(drawn.svg)}', encoding="utf-8"
    )
    if drawn.png is None:
        return [svg_file]
    png_file = out_dir / f"{stem}.png"
    png_file.write_bytes(drawn.png)
    return [png_file, svg_file]


@dataclass(frozen=True, slots=True)
class FigureFiles:
    """Where a report's figures go and how: the folder, PNG beside the SVG or not, the
    cache of earlier drawings (none by default), and whether every figure is drawn or
    only those a reader needs first (each section says which it leaves out)."""

    out_dir: Path
    png: bool = False
    cache: Cache = field(default_factory=Cache)
    every: bool = True
    # every accelerator family the page's figures draw: each keeps one colour and marker
    # in all of them (``gpuscale.report.style.page_families``); empty: each figure's own
    families: tuple[str, ...] = ()

    def key(self, stem: str, *inputs: object) -> str:
        """The cache key of the figure ``stem`` drawn from ``inputs`` ("": not cached)."""
        if self.cache.folder is None or not inputs:
            return ""
        return self.cache.key("figure", stem, self.png, self.families, *inputs)

    def save(self, make: Callable[[], Chart], stem: str, *inputs: object) -> tuple[str, list[str]]:
        """The inline SVG and file names of the figure ``make()`` draws from ``inputs``
        (picklable: they key the cache; none: never cached), drawn now or taken from the
        cache."""
        key = self.key(stem, *inputs)
        drawn = self.cache.get(key)
        if isinstance(drawn, NothingToDraw):  # why it was not drawn, kept as well
            raise drawn
        if not isinstance(drawn, Drawn):
            # lazy: the figure style imports matplotlib, only in the process that draws
            from gpuscale.report.style import page_families

            try:
                with page_families(self.families):
                    drawn = draw(make(), stem, png=self.png)
            except NothingToDraw as why:
                if key:
                    self.cache.put(key, why)
                raise
            if key:
                self.cache.put(key, drawn)
        return drawn.svg, [f.name for f in write_drawn(drawn, self.out_dir, stem)]


def _standalone(svg: str) -> str:
    """An inline SVG made a standalone file again (explicit size for viewers)."""
    return svg.replace('class="figure"', 'class="figure" width="100%"', 1)
