"""The look every gpuscale figure shares: palette, rc style, sizes, axes helpers and the
:class:`Chart` a figure function returns (a Figure and its point tooltips)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec, TypedDict

import matplotlib
from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from matplotlib.markers import MarkerStyle
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullLocator

if TYPE_CHECKING:  # matplotlib's own types (matplotlib.typing: 3.8 on)
    from matplotlib.typing import ColorType, LineStyleType, RcKeyType

# Okabe-Ito: distinguishable with every common colour-vision deficiency.
OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
# Accelerator families: one colour each, the same in every figure. Okabe-Ito (less black)
# then Paul Tol's "muted" scheme: 16 hues safe for colour-blind readers, assigned in the
# order of FAMILY_ORDER (the families most submitted first); a family past the 16th shares
# a hue with one at least 16 places earlier but never its marker.
TOL_MUTED = (
    "#332288",
    "#88CCEE",
    "#44AA99",
    "#117733",
    "#999933",
    "#DDCC77",
    "#CC6677",
    "#882255",
    "#AA4499",
)
FAMILY_PALETTE = OKABE_ITO[:7] + TOL_MUTED
FAMILY_ORDER = (
    "H100-SXM5-80GB",
    "H200-SXM5-141GB",
    "B200",
    "GB200",
    "A100-PCIe-80GB",
    "H100-PCIe-80GB",
    "A100-SXM4-80GB",
    "A100-SXM4-40GB",
    "L40S",
    "A30",
    "Gaudi2",
    "TPU-v5p",
    "L40",
    "A100-PCIe-40GB",
    "MI300X",
    "RTX A5000",
    "A40",
    "TPU-Trillium",
    "H200-NVL-141GB",
    "L4",
    "RTX 4090",
    "MI325X",
    "RX 7900 XTX",
    "H100-NVL-94GB",
    "H100-SXM5-96GB",
    "A10G",
    "Gaudi",
    "IPU-GC200",
    "MI350X",
    "MI355X",
    "TPU-v4",
    "TPU-v5e",
)
FIGSIZE = (5.6, 3.6)
# Fixed margins (a legend outside on the right); cheaper than tight_layout's extra draw.
MARGINS = {"left": 0.13, "right": 0.66, "bottom": 0.14, "top": 0.9}

# Applied while a figure is built and saved (never to matplotlib's global state).
STYLE: dict[RcKeyType, str | float | bool] = {
    "font.size": 8.5,
    "axes.titlesize": 9.5,
    "axes.labelsize": 8.5,
    "legend.fontsize": 7,
    "svg.fonttype": "none",
    # A fixed title height: matplotlib's automatic one measures every tick label of the
    # axes again on each draw (a fifth of the drawing time); no axes has a top x axis.
    "axes.titley": 1.0,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    # Text is text: a system name from a log containing "$...$" must never reach
    # matplotlib's mathtext (it would be drawn as math, or fail to parse).
    "text.parse_math": False,
}


P = ParamSpec("P")


def styled(fn: Callable[P, Chart]) -> Callable[P, Chart]:
    """Build the figure under :data:`STYLE`."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> Chart:
        with matplotlib.rc_context(STYLE):
            return fn(*args, **kwargs)

    return wrapper


def new_axes(figsize: tuple[float, float] = FIGSIZE) -> tuple[Figure, Axes]:
    fig = Figure(figsize=figsize)
    return fig, fig.subplots()


@dataclass(frozen=True, slots=True)
class Chart:
    """A figure and, per scatter ``gid``, the tooltip of each point in plotting order."""

    figure: Figure
    labels: dict[str, list[str]]


def count_label(value: float, _pos: int = 0) -> str:
    """Accelerator counts as 4, 64, 1k, 4k."""
    return f"{value / 1024:g}k" if value >= 1024 else f"{value:g}"


def log_x(ax: Axes, label: str = "accelerators (log scale)") -> None:
    ax.set_xscale("log", base=2)
    # Powers of 2, thinned to at most ~8 labels: 1, 4, 16 ... 4k over a wide range, but
    # 4, 8, 16 where every system has 8 (powers of 4 alone left such an axis unlabelled).
    ax.xaxis.set_major_locator(LogLocator(base=2, numticks=8))
    ax.xaxis.set_major_formatter(FuncFormatter(count_label))
    # No minor ticks: unlabelled, they cost a quarter of the drawing time.
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel(label)


def tick_label(value: float, _pos: int = 0) -> str:
    """A tick as people write it, one form on every axis: 0.1, 20, 5000, 100k, 1M, 2G
    (``{:g}`` alone wrote 100000 beside 1e+06)."""
    for above, size, unit in ((1e9, 1e9, "G"), (1e6, 1e6, "M"), (1e4, 1e3, "k")):
        if abs(value) >= above:  # 5000 stays 5000; 10k from ten thousand on
            return f"{value / size:g}{unit}"
    return f"{value:g}"


class PlainLogLocator(LogLocator):
    """Ticks of a log axis at 1, 2 and 5 times the powers of ten; where fewer than two of
    them fall inside the view (an axis spanning less than about a decade, as a DLRM
    convergence figure's 0.67-1.12 epochs had one tick, "1"), 3 to 5 round numbers evenly
    spaced instead (0.7, 0.8 ... 1.1), so that every log axis can be read."""

    def __init__(self) -> None:
        super().__init__(base=10, subs=(1.0, 2.0, 5.0), numticks=12)

    def tick_values(self, vmin: float, vmax: float) -> Any:
        ticks = super().tick_values(vmin, vmax)
        low, high = sorted((vmin, vmax))
        if ((ticks >= low) & (ticks <= high)).sum() >= 2 or not low > 0:
            return ticks
        linear = MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]).tick_values(low, high)
        return linear[linear > 0]


def plain_log(axis: Axis) -> None:
    """Log-axis tick labels as plain numbers (0.1, 10, 1000, 100k, 1M), not powers of ten,
    at least two in view (:class:`PlainLogLocator`)."""
    axis.set_major_locator(PlainLogLocator())
    axis.set_major_formatter(FuncFormatter(tick_label))
    axis.set_minor_locator(NullLocator())


# A line that is a reference, not data (break-even, E' = 1): grey, dashed; the ideal
# (linear) speedup S = N / N_ref: black, dashed and a little heavier, so that it is never
# read as a family's data (no family or cluster colour is black) nor as the grey lines.
class LineStyle(TypedDict):
    """Keyword arguments of a line (``Axes.plot``, ``axhline``, ``Line2D``)."""

    color: ColorType
    linewidth: float
    linestyle: LineStyleType


REFERENCE_LINE: LineStyle = {"color": "#555555", "linewidth": 0.9, "linestyle": "--"}
IDEAL_LINE: LineStyle = {"color": "#000000", "linewidth": 1.1, "linestyle": "--"}
IDEAL_LABEL = "linear (ideal)"  # its legend entry in every figure that draws it


def log_y(ax: Axes, label: str) -> None:
    """A log y axis with plain-number ticks (:func:`plain_log`), labelled."""
    ax.set_yscale("log")
    plain_log(ax.yaxis)
    ax.set_ylabel(label)


def log_log(ax: Axes, y_label: str, x_label: str = "accelerators (log scale)") -> None:
    """Both axes log: counts in powers of 2 (:func:`log_x`), ``y`` in plain numbers
    (:func:`log_y`)."""
    log_x(ax, x_label)
    log_y(ax, y_label)


def legend_outside(ax: Axes) -> None:
    """The legend to the right of the axes (inside ``MARGINS``' free space): never on data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)


def room_for_ticks(fig: Figure, ax: Axes, pad_in: float = 0.05) -> None:
    """Grow the figure to the left and below by what ``ax``'s labels (its rotated tick
    labels of long names above all) reach past its edges as laid out, the axes' own size
    and the other margins kept: nothing is cut off when the figure is saved at its size."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # lazy: one measuring pass

    box = ax.get_tightbbox(FigureCanvasAgg(fig).get_renderer())
    left, below = (max(0.0, -edge / fig.dpi) for edge in (box.x0, box.y0))
    left, below = (past + pad_in if past else 0.0 for past in (left, below))
    if not (left or below):
        return
    width, height = fig.get_size_inches()
    kept = fig.subplotpars
    fig.set_size_inches(width + left, height + below)
    fig.subplots_adjust(
        left=(kept.left * width + left) / (width + left),
        right=(kept.right * width + left) / (width + left),
        bottom=(kept.bottom * height + below) / (height + below),
        top=(kept.top * height + below) / (height + below),
    )


def finish(fig: Figure, ax: Axes, labels: dict[str, list[str]]) -> Chart:
    """The common ending of a one-axes figure: legend outside, light grid, fixed margins."""
    legend_outside(ax)
    ax.grid(alpha=0.25)
    fig.subplots_adjust(**MARGINS)
    return Chart(fig, labels)


# The families of every figure of one page (a report), set by :func:`page_families`
# around each of its figures: a family past FAMILY_ORDER's 16th is styled among them, so it
# keeps one colour and marker on the whole page, not one per figure.
_PAGE_FAMILIES: ContextVar[frozenset[str]] = ContextVar("page_families", default=frozenset())


@contextmanager
def page_families(families: Iterable[str]) -> Iterator[None]:
    """Within it, :func:`family_styles` styles each figure's families as among
    ``families`` (every family the page draws): one style per family on the page."""
    token = _PAGE_FAMILIES.set(frozenset(str(f) for f in families))
    try:
        yield
    finally:
        _PAGE_FAMILIES.reset(token)


def family_styles(families: Iterable[str]) -> dict[str, tuple[str, str]]:
    """(colour, marker) of each family of one figure. The 16 families of FAMILY_ORDER
    that come first keep their own colour in every figure; the others take the first
    colour no family of the page (:func:`page_families`; else of this figure) has, so
    each keeps its style in every figure of a page and no two families of a page share
    one while there are 16 or fewer (then colours repeat with another marker)."""
    own = {str(f) for f in families}
    page = _styles(own | _PAGE_FAMILIES.get())
    return {family: page[family] for family in sorted(own, key=_family_rank)}


def _styles(families: set[str]) -> dict[str, tuple[str, str]]:
    chosen: dict[str, tuple[str, str]] = {}
    rest = []
    for family in sorted(families, key=_family_rank):
        index = _family_rank(family)[0]
        if index < len(FAMILY_PALETTE):
            chosen[family] = (FAMILY_PALETTE[index], MARKERS[index % len(MARKERS)])
        else:
            rest.append(family)
    used = {c for c, _ in chosen.values()}
    free = [c for c in FAMILY_PALETTE if c not in used]
    for k, family in enumerate(rest):
        colour = free[k] if k < len(free) else FAMILY_PALETTE[k % len(FAMILY_PALETTE)]
        chosen[family] = (colour, MARKERS[(k + 3) % len(MARKERS)])
    return chosen


def _family_rank(family: str) -> tuple[int, str]:
    if family in FAMILY_ORDER:
        return FAMILY_ORDER.index(family), family
    return len(FAMILY_ORDER), family


# K-means clusters: six colours from Paul Tol's schemes and IBM's colour-blind-safe
# palette, none of the family palette's first seven, chosen (greedily, in this order) to
# keep the smallest CIELAB distance between any two at least 25 for normal vision and
# under simulated protanopia, deuteranopia and tritanopia (Machado et al. 2009; checked in
# tests/report/test_colours.py), and a marker shape each, so clusters are told apart
# without colour too. Figures colour either by family or by cluster, never both.
CLUSTER_PALETTE = ("#228833", "#AA4499", "#785EF0", "#FFB000", "#88CCEE", "#DDCC77")
CLUSTER_MARKERS = ("o", "s", "^", "D", "v", "P")


def cluster_colour(cluster: int) -> str:
    """The colour of a K-means cluster (``CLUSTER_PALETTE``; clusters past the sixth repeat
    colours, never with the same marker)."""
    return CLUSTER_PALETTE[int(cluster) % len(CLUSTER_PALETTE)]


def cluster_marker(cluster: int) -> str:
    """The marker shape of a K-means cluster (``CLUSTER_MARKERS``)."""
    return CLUSTER_MARKERS[int(cluster) % len(CLUSTER_MARKERS)]


def set_markers(collection: PathCollection, markers: Iterable[str]) -> None:
    """One marker shape per point of a scatter ``collection`` (matplotlib draws one shape
    per call), keeping the points' order (their tooltips follow it)."""
    paths = []
    for marker in markers:
        style = MarkerStyle(marker)
        paths.append(style.get_path().transformed(style.get_transform()))
    collection.set_paths(paths)


def cluster_legend(ax: Axes, clusters: Iterable[int], size: float = 24) -> None:
    """A legend entry per cluster: its colour and its marker."""
    for c in sorted(set(int(c) for c in clusters)):
        ax.scatter(
            [], [], c=cluster_colour(c), marker=cluster_marker(c), s=size, label=f"cluster {c}"
        )
