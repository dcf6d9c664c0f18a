"""The transcript viewer: what each agent said, saw and privately believed, turn by turn.

`backchannel view RUN` serves it on 127.0.0.1; `--static DIR` writes a copy that opens from
file://. A paradigm's view is `register_view(ParadigmView(...))` plus one script in
`static/paradigms/`.
"""

from backchannel.view import (  # noqa: F401 - they register the paradigm views
    _council,
    _dyad,
    _peer_pressure,
    _testimony,
)
from backchannel.view._query import BadQuery, ListQuery
from backchannel.view._reader import RunReader, RunUnreadable
from backchannel.view._server import CSP, make_app
from backchannel.view._static import write_static
from backchannel.view._views import Column, ParadigmView, register_view, view_for

__all__ = [
    "CSP",
    "BadQuery",
    "Column",
    "ListQuery",
    "ParadigmView",
    "RunReader",
    "RunUnreadable",
    "make_app",
    "register_view",
    "view_for",
    "write_static",
]
