"""The transcript viewer: what each agent said, saw and privately believed, turn by turn.

`backchannel view RUN` serves it on 127.0.0.1; `--static DIR` writes a copy that opens from
file://. What a paradigm adds to it (table columns, badges, panels, round names) is its
`Paradigm.view` hook, drawn by one generic renderer: the viewer knows no paradigm. Names are
imported on first use, so reading a run does not load the web server.
"""

from typing import TYPE_CHECKING

from backchannel._lazy import lazy_exports

if TYPE_CHECKING:
    from backchannel.view._query import BadQuery, ListQuery
    from backchannel.view._reader import RunReader, RunUnreadable
    from backchannel.view._server import CSP, make_app, serve
    from backchannel.view._static import write_static
    from backchannel.view._views import view_of

__all__ = [
    "CSP",
    "BadQuery",
    "ListQuery",
    "RunReader",
    "RunUnreadable",
    "make_app",
    "serve",
    "view_of",
    "write_static",
]

if not TYPE_CHECKING:  # names are imported on first use: see backchannel._lazy
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "._query": ("BadQuery", "ListQuery"),
            "._reader": ("RunReader", "RunUnreadable"),
            "._server": ("CSP", "make_app", "serve"),
            "._static": ("write_static",),
            "._views": ("view_of",),
        },
    )
