"""The interactive frontier explorer of the HTML book: computed frontiers as a plotly figure.

:func:`explorer_figure` draws cost per million output tokens against tokens per second per user
(both on log axes), one trace per setting, with the configuration of every frontier point in its
hover label and buttons that show one group of settings at a time. :func:`explorer_html` returns
the ``<div>`` to embed in a page: it never references plotly.js (the book serves its own copy, see
:mod:`inference_math.book.sphinx_plotly`), so the page works without a network.

:func:`paper_groups` gathers the settings of the paper's comparisons that the explorer shows:
today's models on H100s (without speculative decoding), the GPU generations and the weight
precisions of Erdil (2025), section 4.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from ..core.validation import InputError
from ..fullmodel import comparisons as C
from ..fullmodel.search import Frontier, Setting

DIV_ID = "frontier-explorer"

#: Columns of a trace's ``customdata``: (FrontierPoint attribute, d3 format in the hover label).
#: The formats are also valid Python format specifications.
HOVER_COLUMNS = (
    ("gpus", ".1f"), ("batch", ".1f"), ("n_tp", ".2f"), ("n_pp", ".2f"), ("n_ep", ".1f"),
    ("n_tp_attn", ".2f"), ("gamma", ".0f"), ("mfu", ".1%"),
)

#: The book works offline: nothing offers to upload the chart (plotly.js's "Share chart").
CONFIG = {
    "displaylogo": False,
    "showSendToCloud": False,
    "modeBarButtonsToRemove": ["sendChartToCloud", "lasso2d", "select2d"],
    "responsive": True,
    "scrollZoom": False,
    "toImageButtonOptions": {"format": "svg", "filename": DIV_ID},
}

#: Colour-blind-safe qualitative colours (Paul Tol's "bright" and "muted"), distinct for the nine
#: paper frontiers instead of plotly's default run of oranges and reds.
COLORWAY = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#332288",
            "#999933", "#882255", "#44AA99", "#BBBBBB")

#: The groups of :func:`paper_groups`, in button order after "All", and of :func:`book_groups`.
MODELS_GROUP = "The paper's models (H100)"
GPUS_GROUP = "GPU generations"
PRECISION_GROUP = "Weight precision"
CURVES_GROUP = "The book's three curves (H100)"
#: The model, GPU and weight bytes drawn on each of the book's curves.
CURVES_MODEL, CURVES_GPU, CURVES_WEIGHT_BYTES = "llama-3.3-70b", "h100", 1.0


def weight_bits(setting: Setting) -> int:
    return round(8 * setting.w)


def trace_name(setting: Setting) -> str:
    """A legend entry naming what a setting is: model, weight precision, GPU, drafter, context,
    and the curve where it is not the paper's by default.

    The reference code's labels are not used: some name a precision or a drafter the setting
    does not have (see the erratum of the chapter on today's models). Some model presets carry
    their precision in their name ("Llama 3 70B 8-bit"); it is dropped and stated once.
    """
    model = re.sub(r"\s+\d+-bit$", "", setting.model.name)
    parts = [model, f"{weight_bits(setting)}-bit", setting.gpu.name.removesuffix(" SXM")]
    if setting.speculative:
        parts.append(f"drafter {setting.drafter.name}")
    if setting.context:
        parts.append(f"context {setting.context:,.0f}")
    if setting.curve is not None or setting.curve_name != "paper":
        parts.append(f"{setting.curve_name} curve")
    return ", ".join(parts)


def paper_groups() -> dict[str, list[Setting]]:
    """The explorer's settings by group, from the paper's comparisons (no speculative decoding).

    The paper's models are the settings of the paper's Tables 2 and 3 without their drafter (so the
    Llamas have the 8-bit weights their labels name); the GPU generations are Table 4's and the
    precisions Table 6's. A setting in several groups (Llama 3 70B, 8-bit, H100) is one object.
    """
    chosen = {
        MODELS_GROUP: [dataclasses.replace(s, drafter=None) for s in
                       C.settings("all_models_comparison_with_spec_dec").values()],
        GPUS_GROUP: list(C.settings("gpus_comparison").values()),
        PRECISION_GROUP: list(C.settings("quantization_comparison").values()),
    }
    unique: dict[str, Setting] = {}
    groups = {}
    for group, settings in chosen.items():
        groups[group] = []
        for setting in settings:
            name = trace_name(setting)
            seen = unique.setdefault(name, setting)
            # equal apart from the reference code's label: one frontier serves both groups
            if dataclasses.replace(seen, label="") != dataclasses.replace(setting, label=""):
                raise InputError(f"two different settings are both named {name!r}")
            groups[group].append(seen)
    return groups


def book_groups() -> dict[str, list[Setting]]:
    """:func:`paper_groups` and one of today's models, read from its config, on the book's three
    curves (the paper's rules, the physical rules and the limit) at the H100 preset's price."""
    from ..presets.hardware import get_gpu
    from ..presets.models import get_model

    model, gpu = get_model(CURVES_MODEL), get_gpu(CURVES_GPU)
    curves = [Setting(model, gpu, weight_bytes=CURVES_WEIGHT_BYTES, curve=curve)
              for curve in ("paper", "physical", "limit")]
    return {**paper_groups(), CURVES_GROUP: curves}


def up_to(front: Frontier, speed: float) -> Frontier:
    """``front`` without its points faster than ``speed`` tokens/s per user: the limit counts no
    latency, so its frontier runs on to speeds no hardware reaches and would stretch the axis."""
    return dataclasses.replace(front, points=[pt for pt in front.points
                                              if pt.tokens_per_s <= speed])


def hover_template(name: str) -> str:
    """The hover label of one trace: speed, cost and the configuration of the point."""
    cell = {key: f"%{{customdata[{k}]:{fmt}}}" for k, (key, fmt) in enumerate(HOVER_COLUMNS)}
    return (f"<b>{name}</b><br>"
            "%{x:.1f} tokens/s per user, $%{y:.3f} per million tokens<br>"
            f"N = {cell['gpus']} GPUs, batch {cell['batch']}<br>"
            f"TP {cell['n_tp']} × PP {cell['n_pp']}, EP {cell['n_ep']}, "
            f"TP attn {cell['n_tp_attn']}<br>"
            "%{hovertext} tensor parallelism<br>"
            f"γ = {cell['gamma']}, MFU {cell['mfu']}<br>"
            "binding: %{text}<extra></extra>")


def frontier_trace(front: Frontier, name: str | None = None) -> go.Scatter:
    """One frontier as a line, sorted by speed, each point carrying its configuration."""
    if not front.points:
        raise InputError(f"frontier of {trace_name(front.setting)!r} has no points")
    name = trace_name(front.setting) if name is None else name
    points = sorted(front.points, key=lambda pt: pt.tokens_per_s)
    return go.Scatter(
        x=np.array([pt.tokens_per_s for pt in points]),
        y=np.array([pt.usd_per_mtok for pt in points]),
        customdata=np.array([[float(getattr(pt, key)) for key, _ in HOVER_COLUMNS] for pt in points]),
        hovertext=["2-D" if pt.two_d else "1-D" for pt in points],
        text=[pt.binding for pt in points],
        name=name, mode="lines", line={"width": 2}, hovertemplate=hover_template(name),
    )


def explorer_figure(frontiers: Sequence[Frontier],
                    groups: Mapping[str, Sequence[str]] | None = None) -> go.Figure:
    """The explorer: one trace per frontier, named by :func:`trace_name`.

    ``groups`` maps a button title to the trace names it shows (the others stay in the legend,
    greyed out, one click away); an "All" button comes first and is the initial view.
    """
    if not frontiers:
        raise InputError("the explorer needs at least one frontier")
    names = [trace_name(front.setting) for front in frontiers]
    if len(set(names)) != len(names):
        raise InputError(f"two frontiers have the same trace name: {names}")
    fig = go.Figure([frontier_trace(front, name) for front, name in zip(frontiers, names, strict=True)])
    buttons = [{"label": "All", "method": "restyle", "args": [{"visible": [True] * len(names)}]}]
    for title, members in (groups or {}).items():
        unknown = set(members) - set(names)
        if unknown:
            raise InputError(f"group {title!r} names traces that are not plotted: {sorted(unknown)}")
        visible = [True if name in members else "legendonly" for name in names]
        buttons.append({"label": title, "method": "restyle", "args": [{"visible": visible}]})
    fig.update_layout(
        template="plotly_white",
        colorway=list(COLORWAY),
        # one labelled tick per decade, in plain numbers and dollars (no crowded minor labels)
        xaxis={"type": "log", "dtick": 1, "exponentformat": "none",
               "title": {"text": "tokens per second per user"}},
        yaxis={"type": "log", "dtick": 1, "exponentformat": "none", "tickprefix": "$",
               "title": {"text": "cost ($ per million output tokens)"}},
        modebar={"orientation": "v"},  # down the right edge, clear of the group menu
        hovermode="closest",
        hoverlabel={"align": "left"},
        legend={"orientation": "h", "yanchor": "top", "y": -0.15, "xanchor": "left", "x": 0},
        margin={"l": 70, "r": 20, "t": 60, "b": 40},
        # a drop-down menu: a row of buttons ran off a phone's screen
        updatemenus=[{"type": "dropdown", "direction": "down", "active": 0, "showactive": True,
                      "x": 0, "xanchor": "left", "y": 1.02, "yanchor": "bottom", "pad": {"r": 4},
                      "buttons": buttons}],
    )
    return fig


def explorer_html(fig: go.Figure, height: str = "720px") -> str:
    """The figure's ``<div>`` and plotting call, without plotly.js (the page loads the book's copy)."""
    return fig.to_html(full_html=False, include_plotlyjs=False, include_mathjax=False,
                       div_id=DIV_ID, config=CONFIG, default_width="100%", default_height=height)
