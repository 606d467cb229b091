"""Fixes to the rendered HTML that the browser tests found (tests/test_browser.py).

Under Jupyter Book 1.x every page gets two inline scripts twice: sphinx-thebe's configuration
(``const THEBE_JS_URL = ...``) and sphinx-togglebutton's selector. The second ``const`` throws
"Identifier 'THEBE_JS_URL' has already been declared" in every reader's console. Each page now
gets each script once.
"""


def _key(script):
    # The repeated copy has filename '' where the first has None: compare what the tag holds.
    attributes = getattr(script, "attributes", {})
    return getattr(script, "filename", None) or "", tuple(sorted((k, str(v)) for k, v in attributes.items()))


def unique_scripts(app, pagename, templatename, context, doctree):
    seen, unique = set(), []
    for script in context.get("script_files", []):
        if _key(script) not in seen:
            seen.add(_key(script))
            unique.append(script)
    context["script_files"][:] = unique


def setup(app):
    app.connect("html-page-context", unique_scripts, priority=100)  # before the theme's handlers (500)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
