"""The Sphinx extension that keeps each inline script once per page."""

from __future__ import annotations

from sphinx.builders.html._assets import _JavaScript

from inference_math.book.sphinx_inline_js import unique_inline_scripts


def test_repeated_inline_script_is_dropped_files_and_order_kept():
    # As Sphinx 7.4 lists them: the body once with file name None, once with '' (not equal).
    thebe = 'const THEBE_JS_URL = "x"'
    scripts = [
        _JavaScript("_static/doctools.js", priority=200),
        _JavaScript(None, body=thebe),
        _JavaScript("_static/sphinx-thebe.js", priority=500),
        _JavaScript("", body=thebe),
        _JavaScript(None, body="var other = 1"),
        _JavaScript("_static/doctools.js", priority=200),
    ]
    assert scripts[1] != scripts[3]
    kept = unique_inline_scripts(scripts)
    assert [(s.filename, s.attributes.get("body")) for s in kept] == [
        ("_static/doctools.js", None),
        (None, thebe),
        ("_static/sphinx-thebe.js", None),
        (None, "var other = 1"),
        ("_static/doctools.js", None),  # files are Sphinx's business, left as they are
    ]


def test_inline_scripts_with_different_attributes_are_kept():
    scripts = [_JavaScript(None, body="a"), _JavaScript(None, body="a", type="module")]
    assert unique_inline_scripts(scripts) == scripts
