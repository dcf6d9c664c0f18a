"""`backchannel view RUN [RUN ...]`: browse transcripts in a local web app, or write a copy."""

from __future__ import annotations

import ipaddress
import signal
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated

import typer

from backchannel import _signals
from backchannel.cli._common import err, friendly_errors, out
from backchannel.errors import ConfigError

if TYPE_CHECKING:
    from backchannel.view import RunReader


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@friendly_errors
def view_command(
    runs: Annotated[list[Path], typer.Argument(help="Run directories (opened side by side).")],
    port: Annotated[int, typer.Option("--port", help="Port to serve on (0 picks one).")] = 8765,
    host: Annotated[
        str, typer.Option("--host", help="Address to serve on; anything but loopback warns.")
    ] = "127.0.0.1",
    static: Annotated[
        Path | None,
        typer.Option("--static", help="Write a self-contained copy into DIR instead of serving."),
    ] = None,
) -> None:
    """Show what each agent said, saw and privately believed, turn by turn, in a browser."""
    # Only what the command's first checks need is imported before them: a bad run directory
    # is a one-line error in a fraction of a second, without the web server or pandas.
    from backchannel.view import RunReader

    if not 0 <= port <= 65535:
        raise ConfigError(f"--port {port} is not a port; pass 0..65535")
    readers: list[RunReader] = []
    try:
        for run in runs:
            readers.append(RunReader(run))
        if static is not None:
            from backchannel.view import write_static

            page = write_static(readers, static)
            out.print(f"static copy written: open {page.resolve().as_uri()}", soft_wrap=True)
            return
        _serve(readers, host, port)
    except (KeyboardInterrupt, _signals.Terminated):
        # The viewer only reads: a stop is no failure, and there is nothing to resume.
        if static is not None:
            err.print("stopped: no static copy was written", markup=False)
            raise typer.Exit(1) from None
        out.print("viewer stopped")
    finally:
        for reader in readers:
            reader.close()


def _serve(readers: list[RunReader], host: str, port: int) -> None:
    """Serve until Ctrl-C or SIGTERM; the socket is bound first so a busy port is a clear
    error. From before the address is printed, either signal only asks the server to stop."""
    import asyncio
    import socket

    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise ConfigError(
            f"--host {host!r} is not an address of this machine; pass an IP address or host "
            "name it serves on (127.0.0.1 by default)"
        ) from None
    if not _loopback(host):
        err.print(
            f"warning: serving on {host}: anyone who can reach this address can read these runs",
            markup=False,
        )
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.create_server((host, port), family=family)
    except OSError as error:
        raise ConfigError(
            f"cannot serve on {host}:{port} ({error.strerror}); pass another --port (0 picks one)"
        ) from None
    from backchannel.view import make_app, serve

    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    hosts = {f"{shown}:{bound}", f"localhost:{bound}"} if _loopback(host) else None
    app = make_app(readers, hosts=hosts)
    asked: list[int] = []

    def early(signum: int, frame: FrameType | None) -> None:
        asked.append(signum)  # the loop, once it runs, sees it and stops at once

    previous = {n: signal.signal(n, early) for n in (signal.SIGINT, signal.SIGTERM)}
    out.print(f"viewer on http://{shown}:{bound}/  (Ctrl-C stops it)", soft_wrap=True)

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, stop.set)
        if asked:
            return
        await serve(app, sock, stop)

    try:
        asyncio.run(main())
    finally:
        sock.close()
        for number in previous:
            signal.signal(number, early)  # a late signal does not interrupt the last line
    out.print("viewer stopped")
