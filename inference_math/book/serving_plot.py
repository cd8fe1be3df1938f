"""The serving frontier against measured points: tok/s per GPU (y) over tok/s per user (x).

One figure per model and GPU: the limit (physical rules at the hardware's peaks), the estimate
with its band shaded, the paper's curve, and the measured points overlaid, one marker per
engine. Curves are clipped to the speeds shown, so every plotted point lies inside the axes
(:func:`inference_math.book.figures.check_figure`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MARKERS = ("o", "s", "^", "D", "v", "P", "X")
CURVES = {
    "limit": dict(color="0.15", linestyle="-", label="limit (peaks)"),
    "estimate": dict(color="C0", linestyle="-", label="estimate"),
    "paper": dict(color="C1", linestyle="--", label="paper's curve"),
}


def curve_xy(front, xlim: tuple[float, float]):
    """A frontier's points inside ``xlim`` as arrays (x ascending): speed, rate, band low, high."""
    pts = sorted((p for p in front.points if xlim[0] <= p.tokens_per_s_per_user <= xlim[1]),
                 key=lambda p: p.tokens_per_s_per_user)
    x = np.array([p.tokens_per_s_per_user for p in pts])
    y = np.array([p.output_tokens_per_s_per_gpu for p in pts])
    low = np.array([p.band_low if p.band_low is not None else np.nan for p in pts])
    high = np.array([p.band_high if p.band_high is not None else np.nan for p in pts])
    return x, y, low, high


def plain_log_ticks(ax) -> None:
    """Log axes ticked at 1, 2 and 5 times the powers of ten, written as plain numbers
    (20, 500, 1,000), not as powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())


def serving_figure(fronts: dict, measured: Sequence[tuple[str, float, float]],
                   engines: Sequence[str], xlim: tuple[float, float], title: str):
    """One model/GPU: ``fronts`` maps 'limit', 'estimate', 'paper' to a ServingFrontier,
    ``measured`` holds (engine, tok/s per user, output tok/s per GPU), ``engines`` fixes the
    marker of each engine. Returns the figure."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 4.6))
    values = []
    for curve, style in CURVES.items():
        if curve not in fronts:
            continue
        x, y, low, high = curve_xy(fronts[curve], xlim)
        if not x.size:
            continue
        ax.plot(x, y, lw=2.0, **style)
        values += [y]
        if curve == "estimate" and np.isfinite(low).all():
            ax.fill_between(x, low, high, color="C0", alpha=0.18, lw=0, label="estimate's band")
            values += [low, high]
    for k, engine in enumerate(engines):
        xs = np.array([m[1] for m in measured if m[0] == engine])
        ys = np.array([m[2] for m in measured if m[0] == engine])
        if xs.size:
            ax.plot(xs, ys, MARKERS[k % len(MARKERS)], ms=6, color=f"C{k + 2}", mec="white",
                    mew=0.6, linestyle="none", label=engine)
            values += [ys]
    every = np.concatenate(values)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_ticks(ax)
    ax.set_xlim(*xlim)
    ax.set_ylim(every.min() / 1.3, every.max() * 1.3)
    ax.set_xlabel("tokens/s per user")
    ax.set_ylabel("output tokens/s per GPU")
    ax.set_title(title)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    return fig
