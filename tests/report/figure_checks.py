"""Checks on built figures that tests share."""

from __future__ import annotations

from matplotlib.figure import Figure


def clipped_texts(figure: Figure) -> list[str]:
    """What reaches past the figure's edge, as ``'what' (sides)``: each axes with all it
    draws (title, labels, tick labels, legend) and the figure's own texts and legends.
    A figure with any is cut off when saved (figures are saved at a fixed size)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    canvas = FigureCanvasAgg(figure)  # figures are built without pyplot, so without one
    canvas.draw()
    renderer = canvas.get_renderer()
    bounds = figure.bbox
    parts = [
        (ax.get_title() or ax.get_xlabel() or "axes", ax.get_tightbbox(renderer))
        for ax in figure.axes
        if ax.get_visible()
    ]
    parts += [
        (t.get_text(), t.get_window_extent(renderer))
        for t in figure.texts
        if t.get_visible() and t.get_text().strip()
    ]
    parts += [("legend", legend.get_window_extent(renderer)) for legend in figure.legends]
    out = []
    for what, box in parts:
        if box is None:
            continue
        sides = [
            side
            for side, past in (
                ("left", box.x0 < bounds.x0 - 1),
                ("right", box.x1 > bounds.x1 + 1),
                ("bottom", box.y0 < bounds.y0 - 1),
                ("top", box.y1 > bounds.y1 + 1),
            )
            if past
        ]
        if sides:
            out.append(f"{what!r} ({', '.join(sides)})")
    return out
