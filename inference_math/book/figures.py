"""Figure style and export: one look for every chapter, byte-stable SVG files in figures/.

Figures are shown inline as SVG (sharp at any zoom) with a PNG beside it in the notebook for the
LaTeX build, which cannot take SVG. :func:`save` also checks what a reader needs to read a figure
on a phone: text no smaller than :data:`MIN_PHONE_PX` once the figure is scaled to a phone's
column, every plotted point inside the axes, and dollar ticks on every axis of dollars.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

#: figures/ at the top of the repository, found from the package, not the working directory
#: (chapters run with their own folder as the working directory, nbval from a copy elsewhere).
FIGURE_DIR = Path(__file__).resolve().parents[2] / "figures"

#: Width of the text column on a phone (390 px wide screen), in CSS pixels: a wider figure is
#: scaled down to it, and its text with it.
PHONE_COLUMN_PX = 360
#: The smallest text, in CSS pixels on that phone, that :func:`save` accepts.
MIN_PHONE_PX = 9.0
#: A figure is laid out at this width (inches); at 11 pt its text is 9.2 px on the phone.
WIDTH = 6.0
#: Resolution of the PNG that notebooks keep beside the SVG, for the PDF build (LaTeX takes no SVG).
PNG_DPI = 200

STYLE = {
    "figure.figsize": (WIDTH, 3.7),
    "figure.dpi": 110,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 2.0,
    "font.size": 11,
    "axes.titlesize": 11,
    "axes.labelsize": 11,
    "xtick.labelsize": 11,
    "ytick.labelsize": 11,
    "legend.fontsize": 11,
    "legend.frameon": False,
    "legend.handlelength": 1.6,
    # log axes label 0.001 to 1000 as plain numbers (100, not 10^2)
    "axes.formatter.min_exponent": 4,
    "svg.hashsalt": "inference-economics-book",
    "svg.fonttype": "path",
}


def use_style() -> None:
    """Apply the book's matplotlib style; notebooks show figures as SVG (and keep a PNG)."""
    import matplotlib as mpl

    mpl.rcParams.update(STYLE)
    try:
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # pragma: no cover - matplotlib-inline comes with IPython
        return
    set_matplotlib_formats("svg", "png", dpi=PNG_DPI)


# --- dollars on an axis --------------------------------------------------------------------------

def usd(value: float) -> str:
    """A dollar tick label: $0.001, $0.05, $0.10, $1, $2.50, $10, $1,000."""
    value = float(value)
    if value == 0:
        return "$0"
    sign = "−" if value < 0 else ""
    value = abs(value)
    if value >= 1:
        text = f"{value:,.2f}"
        if text.endswith(".00"):
            text = text[:-3]
    else:
        decimals = max(2, math.ceil(-math.log10(value) - 1e-9) + 1)
        text = f"{value:.{decimals}f}"
        # keep cents (0.10), drop further zeros (0.0010 -> 0.001)
        while len(text.split(".")[1]) > 2 and text.endswith("0"):
            text = text[:-1]
    return f"{sign}${text}"


def _usd_log_formatter(minor: bool):
    from matplotlib.ticker import LogFormatter

    class UsdLogFormatter(LogFormatter):
        """matplotlib's choice of which log ticks to label, with dollar labels."""

        book_usd = True

        def _num_to_string(self, x, vmin, vmax):
            return usd(x)

    return UsdLogFormatter(labelOnlyBase=not minor)


def usd_axis(ax, axis: str = "y", label: str | None = None) -> None:
    """Dollar tick labels ($0.10, $1, $10) on ``ax``'s x or y axis, linear or logarithmic.

    Call it after the axis scale is set. On a log axis that spans a decade or more the limits are
    widened to whole decades, so the lowest and highest points lie between labelled ticks.
    """
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    target = ax.xaxis if axis == "x" else ax.yaxis
    if label is not None:
        target.set_label_text(label)
    plain = FuncFormatter(lambda x, _pos: usd(x))
    plain.book_usd = True
    if target.get_scale() != "log":
        target.set_major_formatter(plain)
    elif isinstance(target.get_major_locator(), FixedLocator):
        # ticks the chapter chose: every one labelled, no minor labels
        target.set_major_formatter(plain)
        target.set_minor_formatter(NullFormatter())
    else:
        decade_limits(ax, axis)
        target.set_major_formatter(_usd_log_formatter(minor=False))
        target.set_minor_formatter(_usd_log_formatter(minor=True))


def decade_limits(ax, axis: str = "y") -> None:
    """Widen a log axis that spans at least a decade of data to the enclosing powers of ten."""
    lo, hi = _data_interval(ax, axis)
    if not (lo > 0 and hi > lo) or math.log10(hi / lo) < 1:
        return
    lower, upper = 10.0 ** math.floor(math.log10(lo) + 1e-9), 10.0 ** math.ceil(math.log10(hi) - 1e-9)
    cur_lo, cur_hi = ax.get_xlim() if axis == "x" else ax.get_ylim()
    lower, upper = min(lower, cur_lo), max(upper, cur_hi)
    if axis == "x":
        ax.set_xlim(lower, upper)
    else:
        ax.set_ylim(lower, upper)


def _data_interval(ax, axis: str) -> tuple[float, float]:
    """Smallest and largest positive finite coordinate of the lines and markers on ``ax``."""
    import numpy as np

    values = [np.asarray(v, dtype=float).ravel() for v in _plotted(ax, axis)]
    values = [v[np.isfinite(v) & (v > 0)] for v in values]
    values = [v for v in values if v.size]
    if not values:
        return (math.nan, math.nan)
    every = np.concatenate(values)
    return float(every.min()), float(every.max())


def _plotted(ax, axis: str):
    """Data coordinates along ``axis`` of the lines, markers and scatter points of ``ax``.

    Lines drawn across the axes (axhline, axvline) are left out: they are references, not data.
    """
    import numpy as np

    index = 0 if axis == "x" else 1
    for line in ax.get_lines():
        if line.get_transform() is not ax.transData:
            continue  # axhline/axvline: in axes coordinates along one direction
        yield np.asarray(line.get_xdata() if axis == "x" else line.get_ydata(), dtype=float)
    from matplotlib.collections import PathCollection

    for collection in ax.collections:
        # scatter points: markers placed at data offsets (areas such as stackplot are not points)
        if not isinstance(collection, PathCollection):
            continue
        if collection.get_offset_transform() is not ax.transData:
            continue
        offsets = np.asarray(collection.get_offsets(), dtype=float)
        if offsets.ndim == 2 and offsets.size:
            yield offsets[:, index]


# --- checks and export ---------------------------------------------------------------------------

_DOLLAR_LABEL = re.compile(r"^\$ per |^cost per|\(\$\)|\$/")


def check_figure(fig) -> list[str]:
    """What a reader could not read in ``fig``: too small text, points off the axes, dollar axes
    without dollar ticks. Empty if none."""
    import numpy as np

    problems = []
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width_in = fig.get_tightbbox(renderer).width
    # A figure of width_in inches is shown at most PHONE_COLUMN_PX wide on a phone; a text of s pt
    # is s/72 in of it, so s/72 * PHONE_COLUMN_PX / width_in px.
    scale = PHONE_COLUMN_PX / (72.0 * width_in)
    smallest = min((t.get_fontsize() for t in fig.findobj(_is_visible_text)), default=None)
    if smallest is not None and smallest * scale < MIN_PHONE_PX - 1e-9:
        problems.append(f"text of {smallest:g} pt in a figure {width_in:.1f} in wide is "
                        f"{smallest * scale:.1f} px on a phone (at least {MIN_PHONE_PX:g} px)")
    for n, ax in enumerate(fig.axes):
        for axis in ("x", "y"):
            target = ax.xaxis if axis == "x" else ax.yaxis
            lo, hi = sorted(ax.get_xlim() if axis == "x" else ax.get_ylim())
            tol = 1e-9 * max(abs(lo), abs(hi))
            for values in _plotted(ax, axis):
                values = values[np.isfinite(values)]
                if values.size and (values.min() < lo - tol or values.max() > hi + tol):
                    problems.append(f"axes {n}: points outside the {axis} range "
                                    f"[{lo:g}, {hi:g}] ({values.min():g} to {values.max():g})")
                    break
            if _DOLLAR_LABEL.search(target.get_label_text()) and not getattr(
                    target.get_major_formatter(), "book_usd", False):
                problems.append(f"axes {n}: the {axis} axis is in dollars without dollar ticks "
                                "(figures.usd_axis)")
    return problems


def _is_visible_text(artist) -> bool:
    from matplotlib.text import Text

    return isinstance(artist, Text) and artist.get_visible() and bool(artist.get_text().strip())


def save(fig, name: str) -> Path:
    """Write ``fig`` to figures/<name>.svg with no date stamp, so rebuilds give the same bytes.

    Raises ValueError if :func:`check_figure` finds something a reader could not read.
    """
    problems = check_figure(fig)
    if problems:
        raise ValueError(f"figure {name}: " + "; ".join(problems))
    FIGURE_DIR.mkdir(exist_ok=True)
    path = FIGURE_DIR / f"{name}.svg"
    fig.savefig(path, metadata={"Date": None}, bbox_inches="tight")
    return path
