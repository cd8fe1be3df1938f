"""Each inline <script> once per page.

Sphinx 7.4 lists a body-only script added after the builder starts (sphinx-thebe's configuration,
sphinx-togglebutton's selector) twice: once as added, once re-read from the registry with an empty
file name. The second `const THEBE_JS_URL` is a SyntaxError in every page's console.
"""


def _drop_repeated_inline_scripts(app, pagename, templatename, context, doctree):
    seen = set()
    kept = []
    for script in context.get("script_files", []):
        if not getattr(script, "filename", None):
            key = tuple(sorted((k, str(v)) for k, v in script.attributes.items()))
            if key in seen:
                continue
            seen.add(key)
        kept.append(script)
    context["script_files"] = kept


def setup(app):
    app.connect("html-page-context", _drop_repeated_inline_scripts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
