"""Every figure of one report draws an accelerator family in one colour and marker: a
family past the palette's fixed sixteen is styled among all the families the page draws,
not among its own figure's (the first screen's overview once drew the RX 7900 XTX in
another colour than RetinaNet's scaling figure)."""

from __future__ import annotations

import re
from dataclasses import replace
from html import unescape
from pathlib import Path

import pytest

import gpuscale.report.svg as svg_module
from gpuscale.analysis import AnalysisOptions, analyze
from gpuscale.mlperf.ingest import read_round
from gpuscale.report.html import build_report

from ..mlperf.logbuilder import RoundBuilder


def _marker_of(handle) -> tuple[str, tuple]:
    """A legend handle's (colour, marker outline), whether a line's or a scatter's."""
    from matplotlib.colors import to_hex
    from matplotlib.lines import Line2D
    from matplotlib.markers import MarkerStyle

    if isinstance(handle, Line2D):
        style = MarkerStyle(handle.get_marker())
        path = style.get_path().transformed(style.get_transform())
        colour = handle.get_markerfacecolor()
    else:
        path, colour = handle.get_paths()[0], handle.get_facecolor()[0]
    return to_hex(colour), tuple(map(tuple, path.vertices.round(3)))


def _family_styles(figure, families: set[str]) -> dict[str, tuple[str, tuple]]:
    legends = [*figure.legends, *(ax.get_legend() for ax in figure.axes)]
    found = {}
    for legend in [x for x in legends if x is not None]:
        for handle, text in zip(legend.legend_handles, legend.get_texts(), strict=True):
            if text.get_text() in families:
                found[text.get_text()] = _marker_of(handle)
    return found


def _round(tmp_path: Path) -> Path:
    """BERT and RetinaNet on H100s, each beside two families past the palette's fixed
    sixteen (one of them a name the palette has never heard of)."""
    builder = RoundBuilder()
    h100 = [("h4", 4, "NVIDIA H100-SXM5-80GB", 40.0), ("h8", 8, "NVIDIA H100-SXM5-80GB", 21.0)]
    bert = [*h100, ("g6", 6, "NVIDIA GeForce RTX 4090", 300.0), ("x2", 2, "Made-up X1", 500.0)]
    ssd = [*h100, ("r6", 6, "AMD Radeon RX 7900 XTX", 320.0), ("y8", 8, "Made-up Y2", 90.0)]
    for benchmark, systems in (("bert", bert), ("ssd", ssd)):
        for system_id, n, model, minutes in systems:
            builder.system("Acme", system_id, per_node=str(n), model=model).runs(
                "Acme", system_id, benchmark, [minutes * f for f in (1.0, 1.02, 0.98, 1.01, 0.99)]
            )
    return builder.write_dir(tmp_path)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(the report's tables, its page, each figure's chart by file stem)."""
    tmp_path = tmp_path_factory.mktemp("page-styles")
    tables = read_round(_round(tmp_path))
    drawn = {}
    draw = svg_module.draw

    def keep(chart, stem, **kw):
        drawn[stem] = chart
        return draw(chart, stem, **kw)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(svg_module, "draw", keep)
        page = build_report(tables, ["bert", "retinanet"], tmp_path / "out", OPTIONS, workers=1)
    return tables, page.read_text(), drawn


OPTIONS = AnalysisOptions(n_boot=100)


def test_a_family_keeps_its_style_in_every_figure_of_a_report(built) -> None:
    _, _, drawn = built
    families = {"RTX 4090", "Made-up X1", "RX 7900 XTX", "Made-up Y2", "H100-SXM5-80GB"}
    styles = {stem: _family_styles(c.figure, families) for stem, c in drawn.items()}
    assert {"v4.1_overview", "v4.1_bert_scaling", "v4.1_retinanet_scaling"} <= set(styles)
    overview = styles["v4.1_overview"]
    assert set(overview) == families
    assert set(styles["v4.1_retinanet_scaling"]) == families - {"RTX 4090", "Made-up X1"}
    for stem, found in styles.items():
        for family, style in found.items():
            assert style == overview[family], (stem, family)
    assert len({colour for colour, _ in overview.values()}) == len(families)  # none shared


def test_like_with_like_bars_carry_the_family_references_spread_as_captioned(built) -> None:
    """The S and E' bars of the like-with-like figures are each system's 95% bootstrap
    intervals against its own family's reference, that reference's runs resampled too:
    the intervals ``analyze -r family`` gives (the report's own study-rule table carries
    them); their captions say so."""
    tables, page, drawn = built
    table = analyze(tables, ["bert"], OPTIONS)[0].table
    own = analyze(tables, ["bert"], replace(OPTIONS, reference="family"))[0].table
    axes = drawn["v4.1_bert_scaling"].figure.axes
    for ax, column in ((axes[0], "speedup"), (axes[1], "normalized_efficiency")):
        expected = {
            (int(r.accelerators), round(lo, 6), round(hi, 6))
            for r, lo, hi in zip(
                own.itertuples(), own[f"{column}_ci_low"], own[f"{column}_ci_high"], strict=True
            )
        }
        bars = ax.collections[0].get_segments()
        assert {(round(s[0][0]), round(s[0][1], 6), round(s[1][1], 6)) for s in bars} == expected
    h8 = own[own["system_id"] == "h8"].iloc[0]  # H100 x 8, against its family's 4
    mine = table[table["system_id"] == "h8"].iloc[0]
    assert mine.family_normalized_efficiency_ci_low == h8.normalized_efficiency_ci_low
    captions = re.findall(r"<figcaption[^>]*>(.*?)</figcaption>", page, flags=re.S)
    said = [c for c in captions if "bars:" in c and "like with like" in c.lower()]
    assert len(said) == 3  # the overview and both workloads' scaling figures
    for caption in said:
        bars_are = re.search(r"bars: ([^;]*);", unescape(caption))
        assert bars_are is not None
        assert "family's reference, its runs resampled too" in bars_are.group(1)
