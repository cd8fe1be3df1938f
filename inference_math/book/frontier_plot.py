"""A frontier drawn as the book draws it: speed per user on a log x axis, $ per million output
tokens on a log y axis with dollar ticks, the fastest point marked.

Used by ``inference-math frontier --plot FILE`` and by the "Bring your own model and GPU" page.
matplotlib is imported here, never when the package or the command line starts.
"""

from __future__ import annotations

from pathlib import Path

from .figures import STYLE, usd_axis

#: Formats ``--plot`` writes, by file suffix.
FORMATS = {".svg": "svg", ".png": "png"}
PNG_DPI = 200


#: Speeds at which a band is read off its draws' frontiers, log-spaced over the frontier's.
BAND_SPEEDS = 40


def draw_frontiers(ax, fronts: dict, bands: dict | None = None) -> None:
    """Draw each ``label -> Frontier`` of ``fronts`` on ``ax``; a triangle marks each fastest point.

    The cost axis is eq-search-cost along the frontier (Frontier.arrays). ``bands`` (``label ->
    FrontierBand``, :mod:`inference_math.analysis.bands`) shades each frontier's band: at each
    speed, the percentiles of the cost read off every draw's frontier
    (``FrontierBand.cost_at_speed``), where both ends are finite.
    """
    import numpy as np
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    every = []
    for label, front in fronts.items():
        speeds, costs = front.arrays()
        every += list(speeds)
        order = speeds.argsort()
        (line,) = ax.plot(speeds[order], costs[order], label=label)
        top = front.max_speed()
        ax.plot(top.tokens_per_s, top.usd_per_mtok, "^", color=line.get_color(),
                markeredgecolor="black", markersize=8)
        band = (bands or {}).get(label)
        if band is not None:
            grid = np.geomspace(speeds.min(), speeds.max(), BAND_SPEEDS)
            ends = np.array([band.cost_at_speed(float(speed)) for speed in grid])
            ok = np.all(np.isfinite(ends), axis=1)
            low, high = (round(100 * q) for q in band.quantiles)
            ax.fill_between(grid[ok], ends[ok, 0], ends[ok, 1], color=line.get_color(),
                            alpha=0.25, linewidth=0,
                            label=(f"{label}: " if len(fronts) > 1 else "")
                            + f"{low}th–{high}th percentile over {band.draws} draws")
    ax.set_xscale("log")
    ax.set_yscale("log")
    low, high = min(every), max(every)
    ax.xaxis.set_major_locator(FixedLocator(speed_ticks(low, high)))
    ax.xaxis.set_major_formatter(FuncFormatter(speed_label))
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(low / 1.15, high * 1.15)
    ax.set_xlabel("tokens per second per user")
    ax.set_ylabel("$ per million output tokens")
    usd_axis(ax, "y")
    if len(fronts) > 1 or bands:
        ax.legend(loc="upper left")


def speed_ticks(low: float, high: float) -> list[float]:
    """Ticks between ``low`` and ``high`` whose labels (:func:`speed_label`) do not overlap:
    1, 2 and 5 times a power of ten over up to three decades, 1 and 3 over up to five, the
    powers of ten over up to eight, every other power of ten beyond."""
    import math

    first, last = math.floor(math.log10(low)), math.ceil(math.log10(high))
    span = math.log10(high / low)
    steps = (1, 2, 5) if span <= 3 else (1, 3) if span <= 5 else (1,)
    stride = 1 if span <= 8 else 2
    ticks = [float(f"{m}e{k}") for k in range(first, last + 1, stride) for m in steps]
    return [t for t in ticks if low / 1.15 <= t <= high * 1.15]


def speed_label(value: float, _position=None) -> str:
    """A speed as a reader writes it: 0.3, 50, 3,000, then 30k, 1M, 10M."""
    for scale, suffix in ((1e6, "M"), (1e4, "k")):
        if value >= scale:
            return f"{value / (1e3 if suffix == 'k' else scale):g}{suffix}"
    return f"{value:,.0f}" if value >= 1 else f"{value:g}"


def frontier_figure(fronts: dict, title: str | None = None, bands: dict | None = None):
    """A new figure (the book's style) with the frontiers of ``fronts`` drawn on it (and their
    ``bands``, :func:`draw_frontiers`)."""
    import matplotlib as mpl
    from matplotlib.figure import Figure

    with mpl.rc_context(STYLE):
        fig = Figure()
        ax = fig.subplots()
        draw_frontiers(ax, fronts, bands)
        if title:
            ax.set_title(title)
        fig.tight_layout()
    return fig


def save_frontier_plot(fronts: dict, path: str | Path, title: str | None = None,
                       bands: dict | None = None) -> Path:
    """Write the frontiers (and their ``bands``) to ``path`` (.svg or .png, by its suffix)
    without a date stamp."""
    path = Path(path)
    fmt = FORMATS[path.suffix.lower()]
    fig = frontier_figure(fronts, title, bands)
    metadata = {"Date": None} if fmt == "svg" else {"Software": None}
    import matplotlib as mpl

    with mpl.rc_context(STYLE):
        fig.savefig(path, format=fmt, metadata=metadata, bbox_inches="tight",
                    dpi=PNG_DPI if fmt == "png" else None)
    return path
