"""Figures to files and to inline SVG with a hover tooltip on every data point."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from pathlib import Path

import matplotlib

from gpuscale.report.style import STYLE, Chart

SVG_NS = "http://www.w3.org/2000/svg"
ET.register_namespace("", SVG_NS)
ET.register_namespace("xlink", "http://www.w3.org/1999/xlink")


def chart_svg(chart: Chart, salt: str) -> str:
    """The chart as an ``<svg>`` element string, each scatter point given a ``<title>``
    (browsers show it on hover). ``salt`` keeps element ids unique across figures."""
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
        group.set("id", f"{salt}-{group.get('id')}")
    root.attrib.pop("width", None)
    root.attrib.pop("height", None)
    root.set("class", "figure")
    root.set("role", "img")
    return ET.tostring(root, encoding="unicode")


def save_chart(chart: Chart, out_dir: Path, stem: str, *, dpi: int = 150) -> tuple[str, list[Path]]:
    """Write ``<stem>.png`` (``dpi``) and ``<stem>.svg`` (with the point tooltips); return
    the inline SVG and the files' paths. The SVG is rendered once for both uses."""
    svg = chart_svg(chart, stem)
    png = out_dir / f"{stem}.png"
    with matplotlib.rc_context(STYLE):
        # zlib level 1: a fifth of the encoding time for a file ~5% larger.
        chart.figure.savefig(
            png, dpi=dpi, metadata={"Software": "gpuscale"}, pil_kwargs={"compress_level": 1}
        )
    svg_file = out_dir / f"{stem}.svg"
    svg_file.write_text(
        f'<?xml version="1.0" encoding="utf-8"?>\n{_standalone(svg)}', encoding="utf-8"
    )
    return svg, [png, svg_file]


def _standalone(svg: str) -> str:
    """An inline SVG made a standalone file again (explicit size for viewers)."""
    return svg.replace('class="figure"', 'class="figure" width="100%"', 1)
