"""The serving frontier against measured points: tok/s per GPU (y) over tok/s per user (x).

One figure per model and GPU: the limit (physical rules at the hardware's peaks), the estimate
with its band shaded, the paper's curve, and the measured points overlaid, one marker per
engine. Given the bands of :mod:`inference_math.analysis.bands` (``bands``), the estimate's shade
is its combined band (its errors and the GPU's assumed values) and the paper's curve gets the
band of the GPU's assumed values where it has width. Curves are clipped to the speeds shown, so
every plotted point lies inside the axes (:func:`inference_math.book.figures.check_figure`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

MARKERS = ("o", "s", "^", "D", "v", "P", "X")
CURVES = {
    "limit": dict(color="0.15", linestyle="-", label="limit (peaks)"),
    "physical": dict(color="C9", linestyle="-.", label="physical"),
    "estimate": dict(color="C0", linestyle="-", label="estimate"),
    "paper": dict(color="C1", linestyle="--", label="paper's curve"),
}


RATE = "output_tokens_per_s_per_gpu"


def curve_xy(front, xlim: tuple[float, float], band=None):
    """A frontier's points inside ``xlim`` as arrays (x ascending): speed, rate, band low, high
    (the points' own band, the estimate's, or that of ``band``, a ServingBand of ``front``)."""
    if band is None:
        low = [p.band_low if p.band_low is not None else np.nan for p in front.points]
        high = [p.band_high if p.band_high is not None else np.nan for p in front.points]
    else:
        low, high = band.low(RATE), band.high(RATE)
    rows = sorted((p.tokens_per_s_per_user, p.output_tokens_per_s_per_gpu, lo, hi)
                  for p, lo, hi in zip(front.points, low, high, strict=True)
                  if xlim[0] <= p.tokens_per_s_per_user <= xlim[1])
    x, y, low, high = (np.array(column, dtype=float) for column in zip(*rows, strict=True)) \
        if rows else (np.array([]),) * 4
    return x, y, low, high


def plain_log_ticks(ax) -> None:
    """Log axes ticked at 1, 2 and 5 times the powers of ten, written as plain numbers
    (20, 500, 1,000), not as powers of ten."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())


#: Legend labels of the bands (10th-90th percentiles): the estimate's errors, and the spread of
#: the GPU's assumed and provisional values (analysis.bands) where it has any.
BAND_LABELS = {
    "estimate": "estimate's band (its misses and the GPU's uncertain numbers)",
    "paper": "paper curve's band (the GPU's uncertain numbers)",
}


def serving_figure(fronts: dict, measured: Sequence[tuple[str, float, float]],
                   engines: Sequence[str], xlim: tuple[float, float], title: str,
                   bands: dict | None = None, engine_fronts: dict | None = None):
    """One model/GPU: ``fronts`` maps curves of :data:`CURVES` ('limit', 'physical', 'estimate',
    'paper'; those absent are not drawn) to a ServingFrontier,
    ``measured`` holds (engine, tok/s per user, output tok/s per GPU), ``engines`` fixes the
    marker of each engine, ``bands`` (optional) maps 'estimate' and 'paper' to the ServingBand
    of that frontier (10th-90th percentiles; a band of no width is not drawn),
    ``engine_fronts`` (optional) maps an engine of ``engines`` to the estimate's frontier given
    that engine, drawn dashed in the colour of its points. Returns the figure."""
    bands = bands or {}
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.0, 4.6))
    values = []
    for curve, style in CURVES.items():
        if curve not in fronts:
            continue
        x, y, low, high = curve_xy(fronts[curve], xlim, bands.get(curve))
        if not x.size:
            continue
        ax.plot(x, y, lw=2.0, **style)
        values += [y]
        if curve in bands and np.isfinite(low).all() and np.any(high > low * (1 + 1e-9)):
            label = BAND_LABELS[curve] if bands[curve].spread else "estimate's band"
            ax.fill_between(x, low, high, color=style["color"], alpha=0.18, lw=0, label=label)
            values += [low, high]
        elif curve == "estimate" and np.isfinite(low).all():
            ax.fill_between(x, low, high, color="C0", alpha=0.18, lw=0, label="estimate's band")
            values += [low, high]
    for k, engine in enumerate(engines):
        xs = np.array([m[1] for m in measured if m[0] == engine])
        ys = np.array([m[2] for m in measured if m[0] == engine])
        if xs.size:
            ax.plot(xs, ys, MARKERS[k % len(MARKERS)], ms=6, color=f"C{k + 2}", mec="white",
                    mew=0.6, linestyle="none", label=engine)
            values += [ys]
        if engine in (engine_fronts or {}):
            x, y, _, _ = curve_xy(engine_fronts[engine], xlim, None)
            if x.size:
                ax.plot(x, y, lw=1.6, ls="--", color=f"C{k + 2}", label=f"estimate, {engine}")
                values += [y]
    every = np.concatenate(values)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_ticks(ax)
    ax.set_xlim(*xlim)
    ax.set_ylim(every.min() / 1.3, every.max() * 1.3)
    ax.set_xlabel("tokens/s per user")
    ax.set_ylabel("output tokens/s per GPU")
    ax.set_title(title)
    # one column when the engines' estimates add long labels, so the figure keeps its width
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=1 if engine_fronts else 2,
              columnspacing=1.0)
    return fig
