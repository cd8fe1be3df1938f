"""The frontier explorer (plotly figure and embedded HTML) and the Sphinx extension serving plotly.js."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from types import SimpleNamespace

import plotly
import pytest

from inference_math import get_gpu, get_model
from inference_math.book import explorer as E
from inference_math.book import sphinx_plotly as SP
from inference_math.core.validation import InputError
from inference_math.fullmodel.search import Setting, frontier

#: plotly.js as the plotly package ships it, located independently of the extension.
PACKAGE_JS = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


@pytest.fixture(scope="module")
def fronts():
    """Two quick frontiers: Llama 3 8B on H100s with its own 16-bit weights and with 8-bit ones."""
    base = Setting(model=get_model("llama-3-8b"), gpu=get_gpu("h100"))
    return [frontier(base), frontier(dataclasses.replace(base, weight_bytes=1.0))]


@pytest.fixture(scope="module")
def fig(fronts):
    return E.explorer_figure(fronts, {"8-bit only": ["Llama 3 8B, 8-bit, H100"]})


def render_hover(trace, i: int) -> str:
    """The hover label of point i as plotly.js fills it in, as plain text (tags dropped)."""
    def field(match):
        name, index, fmt = match.group(1), match.group(2), match.group(3)
        if name == "customdata":
            value = trace.customdata[i][int(index)]
        else:
            value = getattr(trace, name)[i]
        return format(value, fmt) if fmt else str(value)

    text = re.sub(r"%\{(\w+)(?:\[(\d+)\])?(?::([^}]*))?\}", field, trace.hovertemplate)
    text = re.sub(r"<extra>.*?</extra>", "", text)
    return re.sub(r"<[^>]+>", " ", text)


def test_one_trace_per_setting_with_every_frontier_point(fig, fronts):
    assert [trace.name for trace in fig.data] == ["Llama 3 8B, 16-bit, H100", "Llama 3 8B, 8-bit, H100"]
    for trace, front in zip(fig.data, fronts, strict=True):
        assert len(trace.x) == len(trace.y) == len(front.points) > 10
        assert sorted(trace.x) == sorted(pt.tokens_per_s for pt in front.points)
        assert sorted(trace.y) == sorted(pt.usd_per_mtok for pt in front.points)
    assert fig.layout.xaxis.type == fig.layout.yaxis.type == "log"


def test_hover_label_names_the_configuration_of_its_point(fig, fronts):
    for trace, front in zip(fig.data, fronts, strict=True):
        by_speed = {pt.tokens_per_s: pt for pt in front.points}
        bindings_seen = set()
        for i, speed in enumerate(trace.x):
            pt = by_speed[speed]
            label = render_hover(trace, i)
            assert f"N = {pt.gpus:.1f} GPUs" in label
            assert f"batch {pt.batch:.1f}" in label
            assert (f"TP {pt.n_tp:.2f} × PP {pt.n_pp:.2f}, EP {pt.n_ep:.1f}, "
                    f"TP attn {pt.n_tp_attn:.2f}") in label
            assert f"{'2-D' if pt.two_d else '1-D'} tensor parallelism" in label
            assert f"γ = {pt.gamma}," in label
            assert f"MFU {100 * pt.mfu:.1f}%" in label
            assert f"binding: {pt.binding}" in label
            assert f"{pt.tokens_per_s:.1f} tokens/s per user, ${pt.usd_per_mtok:.3f} per million" in label
            bindings_seen.add(pt.binding)
        assert len(bindings_seen) > 1  # the labels were checked on points with different bindings


def test_buttons_show_groups_and_keep_the_rest_in_the_legend(fig):
    buttons = fig.layout.updatemenus[0].buttons
    assert [b.label for b in buttons] == ["All", "8-bit only"]
    assert buttons[0].args[0]["visible"] == [True, True]
    assert buttons[1].args[0]["visible"] == ["legendonly", True]
    assert all(trace.visible is None for trace in fig.data)  # initial view: every curve


def test_bad_input_is_reported(fronts):
    with pytest.raises(InputError, match="not plotted"):
        E.explorer_figure(fronts, {"group": ["no such curve"]})
    with pytest.raises(InputError, match="same trace name"):
        E.explorer_figure([fronts[0], fronts[0]])
    with pytest.raises(InputError, match="at least one"):
        E.explorer_figure([])


def test_embedded_html_is_offline_and_has_the_contract_div(fig):
    html = E.explorer_html(fig)
    assert '<div id="frontier-explorer" class="plotly-graph-div"' in html
    assert "Plotly.newPlot" in html
    assert re.search(r"<script[^>]*\bsrc\s*=", html) is None  # no script is fetched
    assert "https://" not in html and "http://" not in html
    assert "cdn.plot.ly" not in html.lower()
    assert '"displaylogo": false' in html


def test_paper_groups():
    groups = E.paper_groups()
    names = {group: [E.trace_name(s) for s in members] for group, members in groups.items()}
    assert names == {
        "The paper's models (H100)": ["GPT-4, 16-bit, H100", "Llama 3.1 405B, 8-bit, H100",
                                  "Llama 3 70B, 8-bit, H100", "Mixtral 8x22B, 16-bit, H100",
                                  "DeepSeek-V3, 8-bit, H100"],
        "GPU generations": ["Llama 3 70B, 8-bit, H100", "Llama 3 70B, 8-bit, A100",
                            "Llama 3 70B, 8-bit, V100"],
        "Weight precision": ["Llama 3 70B, 16-bit, H100", "Llama 3 70B, 8-bit, H100",
                             "Llama 3 70B, 4-bit, H100"],
    }
    assert not any(s.speculative for members in groups.values() for s in members)
    # the shared setting is one object, so its frontier is computed once
    shared = [s for members in groups.values() for s in members
              if E.trace_name(s) == "Llama 3 70B, 8-bit, H100"]
    assert len(shared) == 3 and shared[0] is shared[1] is shared[2]
    assert shared[0].w == 1.0 and shared[0].usd_per_hour == 2.1


def test_the_books_curves_group_names_each_curve():
    """The group beyond the paper: one model on the three curves, each trace naming its curve,
    at the H100 preset's price (the paper's basis, as the other groups)."""
    groups = E.book_groups()
    assert list(groups)[:3] == list(E.paper_groups())
    curves = groups[E.CURVES_GROUP]
    assert [E.trace_name(s) for s in curves] == [
        f"Llama 3.3 70B, 8-bit, H100, {curve} curve" for curve in ("paper", "physical", "limit")]
    assert {s.usd_per_hour for s in curves} == {get_gpu("h100").price_per_hour}
    # a paper setting left at its default curve is named as before, without a curve
    assert E.trace_name(Setting(get_model("llama-3-8b"), get_gpu("h100"))) == "Llama 3 8B, 16-bit, H100"


def test_up_to_drops_only_the_faster_points(fronts):
    front = fronts[0]
    speeds = sorted(pt.tokens_per_s for pt in front.points)
    cut = speeds[len(speeds) // 2]
    kept = E.up_to(front, cut)
    assert [pt.tokens_per_s for pt in kept.points] == [
        pt.tokens_per_s for pt in front.points if pt.tokens_per_s <= cut]
    assert 0 < len(kept.points) < len(front.points) and kept.setting is front.setting
    assert E.up_to(front, speeds[-1]).points == front.points


def fake_app(fmt: str, outdir: Path):
    added = []
    return SimpleNamespace(builder=SimpleNamespace(format=fmt), outdir=str(outdir),
                           add_js_file=lambda name, **kw: added.append(name), added=added)


def test_extension_copies_the_package_copy_of_plotly_js(tmp_path):
    SP.copy_script(fake_app("html", tmp_path), None)
    assert (tmp_path / "_static" / "plotly.min.js").read_bytes() == PACKAGE_JS.read_bytes()
    for fmt, exception in (("latex", None), ("html", RuntimeError("build failed"))):
        other = tmp_path / f"{fmt}-{exception is None}"
        SP.copy_script(fake_app(fmt, other), exception)
        assert not other.exists()


def test_extension_adds_the_script_only_to_plotly_pages(tmp_path):
    div = '<div id="frontier-explorer" class="plotly-graph-div" style="height:100%"></div>'
    for fmt, body, expected in (("html", f"<p>x</p>{div}", ["plotly.min.js"]),
                                ("html", "<p>no figure</p>", []), ("latex", div, [])):
        app = fake_app(fmt, tmp_path)
        SP.add_script(app, "page", "page.html", {"body": body}, None)
        assert app.added == expected


def test_tiny_sphinx_build_serves_plotly_js_on_the_figure_page_only(tmp_path):
    from sphinx.application import Sphinx

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["inference_math.book.sphinx_plotly"]\n')
    (src / "index.rst").write_text(
        "Index\n=====\n\n.. toctree::\n\n   plain\n\n.. raw:: html\n\n"
        '   <div id="frontier-explorer" class="plotly-graph-div"></div>\n')
    (src / "plain.rst").write_text("Plain\n=====\n\nNo figure here.\n")
    for builder in ("html", "latex"):
        out = tmp_path / builder
        app = Sphinx(str(src), str(src), str(out), str(tmp_path / f"doctrees-{builder}"), builder,
                     status=None, warning=None, freshenv=True)
        app.build()
        assert app.statuscode == 0
    static = tmp_path / "html" / "_static" / "plotly.min.js"
    assert static.read_bytes() == PACKAGE_JS.read_bytes()
    script = re.compile(r'<script src="_static/plotly\.min\.js(\?v=[0-9a-f]+)?"></script>')
    assert script.search((tmp_path / "html" / "index.html").read_text())
    assert "plotly.min.js" not in (tmp_path / "html" / "plain.html").read_text()
    assert not list((tmp_path / "latex").rglob("plotly.min.js"))


def test_no_heading_of_the_chapter_takes_the_figure_div_id():
    # Sphinx gives each section the id of its title: a heading "Frontier explorer" would be
    # <section id="frontier-explorer">, and plotly would draw into it, over the whole page.
    from docutils.nodes import make_id

    chapter = Path(__file__).resolve().parents[1] / "book" / "explorer.md"
    prose = re.sub(r"^```.*?^```", "", chapter.read_text(), flags=re.MULTILINE | re.DOTALL)
    headings = re.findall(r"^#+ (.+)$", prose, flags=re.MULTILINE)
    assert headings == ["The frontier explorer"]
    assert E.DIV_ID not in {make_id(h) for h in headings}
    assert make_id("Frontier explorer") == E.DIV_ID  # the check above can fail


def test_nothing_offers_to_upload_the_chart(fig):
    """The book promises offline use: plotly.js's cloud-sharing control is switched off."""
    html = E.explorer_html(fig)
    assert '"showSendToCloud": false' in html
    assert "sendChartToCloud" in E.CONFIG["modeBarButtonsToRemove"]


def test_cost_ticks_are_dollars_one_per_decade(fig):
    assert fig.layout.yaxis.tickprefix == "$"
    assert fig.layout.yaxis.dtick == 1 and fig.layout.xaxis.dtick == 1
    assert len(set(E.COLORWAY)) == len(E.COLORWAY) >= 9
