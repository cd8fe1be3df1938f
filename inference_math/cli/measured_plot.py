"""``measured --plot``: one panel per group of points sharing a model, GPU, precisions and
lengths whose rows state both axes (tokens/s per user and output tokens/s per GPU), over that
group's limit, estimate (with its band) and paper frontiers; and one panel of the other compared
points as their speed over each curve's."""

from __future__ import annotations

MAX_GROUP_PANELS = 12  # beyond these, a group's points join the ratio panel


def _key(point) -> tuple:
    return (point["model"], point["gpu"], point["weight_bits"], point["kv_bits"],
            point["input_len"], point["output_len"])


def _bits(value) -> str:
    return "unstated" if value is None else f"{value:g}-bit"


def _groups(points, rows):
    """The groups to draw over frontiers: {key: [(point, row), ...]}, largest first."""
    from ..reality import measured_points as mp
    groups: dict[tuple, list] = {}
    for point, row in zip(points, rows, strict=True):
        if row["reason"] is None and point.measured("tok_s_per_user") \
                and point.measured("output_tok_s_per_gpu"):
            groups.setdefault(_key(point), []).append((point, mp.resolve(point, times=True)))
    ordered = sorted(groups.items(), key=lambda item: -len(item[1]))
    return dict(ordered[:MAX_GROUP_PANELS])


def _fronts(resolved, key):
    from ..serving.serving_frontier import ServeError, Workload, serving_frontier
    try:
        return {curve: serving_frontier(Workload(resolved.model, resolved.gpu, key[4], key[5],
                                                 weight_bits=key[2], kv_bits=key[3],
                                                 curve=curve))
                for curve in ("limit", "estimate", "paper")}
    except ServeError:
        return None


def _group_panel(ax, key, members, fronts) -> None:
    import numpy as np

    from ..book.serving_plot import CURVES, MARKERS, curve_xy, plain_log_ticks
    first = members[0][1]
    engines = list(dict.fromkeys(str(p["engine"] or "measured") for p, _ in members))
    measured = [(str(p["engine"] or "measured"), p.measured("tok_s_per_user"),
                 p.measured("output_tok_s_per_gpu")) for p, _ in members]
    speeds = [m[1] for m in measured] + [p.tokens_per_s_per_user
                                         for p in fronts["estimate"].points]
    xlim = (min(speeds) / 1.5, max(m[1] for m in measured) * 3)
    values = [np.array([m[2] for m in measured])]
    for curve, style in CURVES.items():
        if curve not in fronts:
            continue
        x, y, low, high = curve_xy(fronts[curve], xlim)
        if not x.size:
            continue
        ax.plot(x, y, lw=2.0, **style)
        values.append(y)
        if curve == "estimate" and np.isfinite(low).all():
            ax.fill_between(x, low, high, color="C0", alpha=0.18, lw=0,
                            label="estimate's band (10th-90th percentile errors)")
            values += [low, high]
    for k, engine in enumerate(engines):
        xs = [m[1] for m in measured if m[0] == engine]
        ys = [m[2] for m in measured if m[0] == engine]
        ax.plot(xs, ys, MARKERS[k % len(MARKERS)], ms=6, color=f"C{k + 2}", mec="white",
                mew=0.6, linestyle="none", label=f"measured: {engine}")
    every = np.concatenate(values)
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_ticks(ax)
    ax.set_xlim(*xlim)
    ax.set_ylim(every.min() / 1.3, every.max() * 1.3)
    ax.set_xlabel("tokens/s per user")
    ax.set_ylabel("output tokens/s per GPU")
    ax.set_title(f"{first.model.name} on {first.gpu.name}: {key[4]:g} in / {key[5]:g} out, "
                 f"weights {_bits(key[2])}, cache {_bits(key[3])}", fontsize=9)
    ax.legend(fontsize=7)


def _ratio_panel(ax, rows) -> None:
    import numpy as np
    ok = [r for r in rows if r["reason"] is None and (r["efficiency"] or r["error"])]
    ax.set_title("points not drawn over a frontier: measured speed over each curve's", fontsize=9)
    if not ok:
        ax.text(0.5, 0.5, "no other point compared", ha="center", va="center",
                transform=ax.transAxes)
        ax.set_axis_off()
        return
    y = np.arange(len(ok))
    for field, marker, label in (("efficiency", "x", "vs the limit"),
                                 ("error", "o", "vs the estimate")):
        shown = [(k, r[field]) for k, r in enumerate(ok) if r[field]]
        ax.plot([v for _, v in shown], [k for k, _ in shown], marker, linestyle="none",
                label=label)
    ax.axvline(1.0, color="k", lw=0.8)
    ax.set_yticks(y, [f"{r['point_id']} ({r['quantity']})" for r in ok], fontsize=7)
    from matplotlib.ticker import FuncFormatter
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.set_ylim(-0.7, len(ok) - 0.3)
    ratios = [v for r in ok for v in (r["efficiency"], r["error"]) if v]
    ax.set_xlim(min(min(ratios), 1.0) / 1.5, max(max(ratios), 1.0) * 1.5)
    ax.set_xlabel("measured speed / the curve's (a time: curve's / measured); 1 = equal")
    ax.legend(fontsize=7, loc="best")


def plot_measured(points, rows, path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .serving import _save
    panels = []
    drawn = set()
    for key, members in _groups(points, rows).items():
        fronts = _fronts(members[0][1], key)
        if fronts is not None:
            panels.append((key, members, fronts))
            drawn.update(id(p) for p, _ in members)
    others = [row for point, row in zip(points, rows, strict=True) if id(point) not in drawn]
    listed = sum(1 for r in others if r["reason"] is None and (r["efficiency"] or r["error"]))
    heights = [4.6] * len(panels) + [max(2.5, 1.5 + 0.2 * listed)]
    fig, axes = plt.subplots(len(heights), 1, figsize=(7, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    for ax, (key, members, fronts) in zip(axes[:, 0], panels, strict=False):
        _group_panel(ax, key, members, fronts)
    _ratio_panel(axes[-1, 0], others)
    _save(fig, path)
