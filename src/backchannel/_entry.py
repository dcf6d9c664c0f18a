"""The `backchannel` console script: signal handling is in place before the commands are
imported, so Ctrl-C or SIGTERM during start-up ends with a message, not a traceback."""

from __future__ import annotations

import sys

from backchannel import _signals


def main() -> None:
    _signals.install()
    try:
        from backchannel.cli import app

        app()
    except KeyboardInterrupt:
        print(f"interrupted: {_signals.STOPPED_MESSAGE}", file=sys.stderr)
        sys.exit(_signals.EXIT_SIGINT)
    except _signals.Terminated:
        print(f"stopped by SIGTERM: {_signals.STOPPED_MESSAGE}", file=sys.stderr)
        sys.exit(_signals.EXIT_SIGTERM)
