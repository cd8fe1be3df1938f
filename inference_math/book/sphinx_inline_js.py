"""Sphinx extension: each inline ``<script>`` once per page.

Sphinx 7.4 lists a body-only script that an extension adds after the builder starts twice: once as
added (file name ``None``), once re-read from the registry before writing (file name ``''``), and
the two do not compare equal. sphinx-thebe's configuration is such a script, and its second
``const THEBE_JS_URL`` is a SyntaxError in the console of every page. This extension drops the
repeats of an inline script from each page's list; scripts with a file are left alone.

Enable it in ``_config.yml`` under ``sphinx: extra_extensions``.
"""

from __future__ import annotations


def _key(script) -> tuple:
    return tuple(sorted((name, str(value)) for name, value in script.attributes.items()))


def unique_inline_scripts(scripts: list) -> list:
    """``scripts`` in order, without the repeats of a script that has no file, only a body."""
    seen: set[tuple] = set()
    kept = []
    for script in scripts:
        if not getattr(script, "filename", None):
            if _key(script) in seen:
                continue
            seen.add(_key(script))
        kept.append(script)
    return kept


def _on_page_context(app, pagename, templatename, context, doctree) -> None:
    if "script_files" in context:
        context["script_files"] = unique_inline_scripts(context["script_files"])


def setup(app):
    app.connect("html-page-context", _on_page_context)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
