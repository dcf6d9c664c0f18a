"""The front end's one HTML page: no inline script, every script a file of the package.

No script knows a paradigm: `panels.js` draws whatever a paradigm's view hook returns.
"""

from __future__ import annotations

from html import escape

SCRIPTS = ("core.js", "api.js", "plot.js", "graph.js", "detail.js", "timeline.js", "panels.js")
PAGES = ("run.js", "list.js", "conversation.js", "divergent.js", "main.js")
STATIC_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "base-uri 'none'; form-action 'none'"
)


def index_html(*, static: bool) -> str:
    """The page for the server (assets under /static/) or for a static copy (relative paths)."""
    prefix = "static/" if static else "/static/"
    scripts = [*SCRIPTS, *PAGES]
    tags = "\n".join(f'<script src="{escape(prefix + s)}"></script>' for s in scripts)
    csp = (
        f'<meta http-equiv="Content-Security-Policy" content="{escape(STATIC_CSP)}">\n'
        if static
        else ""
    )
    mode = "static" if static else "server"
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
{csp}<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>backchannel viewer</title>
<link rel="stylesheet" href="{prefix}app.css">
</head>
<body data-mode="{mode}">
<header id="top"><a id="home" href="#/">backchannel viewer</a><nav id="runs-nav"></nav></header>
<main id="app"><p class="note">Loading…</p></main>
<aside id="detail" hidden></aside>
{tags}
</body>
</html>
"""
