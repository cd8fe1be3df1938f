"""The Sphinx extension that keeps unused scripts (thebe, Font Awesome's, MathJax's menu) off pages."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pydata_sphinx_theme
from sphinx.builders.html._assets import _CascadingStyleSheet, _JavaScript

from inference_math.book import sphinx_trim


def test_thebe_scripts_and_style_are_dropped_others_kept():
    scripts = [
        _JavaScript("_static/doctools.js", priority=200),
        _JavaScript(None, body='const THEBE_JS_URL = "x"; const thebe_selector = ".cell"'),
        _JavaScript("_static/sphinx-thebe.js", priority=500),
        _JavaScript(None, body="var other = 1"),
    ]
    kept = sphinx_trim.without_thebe(scripts)
    assert [(s.filename, s.attributes.get("body")) for s in kept] == [
        ("_static/doctools.js", None), (None, "var other = 1")]
    sheets = [_CascadingStyleSheet("_static/sphinx-thebe.css"), _CascadingStyleSheet("_static/book.css")]
    assert [s.filename for s in sphinx_trim.without_thebe(sheets)] == ["_static/book.css"]


def test_macros_override_is_the_themes_file_without_font_awesome_script():
    theme = (Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static"
             / "webpack-macros.html").read_text()
    ours = (sphinx_trim.TEMPLATES / "static" / "webpack-macros.html").read_text()
    expected = [line for line in theme.splitlines()
                if "fontawesome.js" not in line and "custom icons" not in line]
    assert ours.splitlines() == expected
    assert "fontawesome" not in ours


def test_mathjax_loads_components_through_its_loader():
    config = SimpleNamespace(templates_path=["_templates"], mathjax_path="mathjax/tex-chtml.js",
                             mathjax3_config={"tex": {"macros": {"x": "y"}}})
    sphinx_trim._on_config_inited(None, config)
    assert config.templates_path[0] == str(sphinx_trim.TEMPLATES)
    assert config.mathjax_path == "mathjax/startup.js"
    assert config.mathjax3_config["loader"]["load"] == sphinx_trim.MATHJAX_COMPONENTS
    assert config.mathjax3_config["tex"] == {"macros": {"x": "y"}}
