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


_HOST_FIX = "pass an address of this machine: 127.0.0.1 (the default), or 0.0.0.0 for all"


def _host_problem(host: str) -> str | None:
    """Why `--host` names no address to serve on, or None (said before any warning)."""
    import socket

    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    if host and all(part.isdigit() for part in host.split(".")):
        return f"--host {host} is not an IP address (four numbers 0..255); {_HOST_FIX}"
    try:
        socket.getaddrinfo(host, None)
    except (OSError, UnicodeError):
        return f"--host {host!r} is no address and no known host name; {_HOST_FIX}"
    return None


def _bind_problem(host: str, port: int, error: OSError) -> str:
    """The one-line refusal of a failed bind, naming the option that fixes it."""
    import errno
    import os

    reason = os.strerror(error.errno) if error.errno else str(error)
    where = f"cannot serve on {host}:{port} ({reason})"
    if error.errno == errno.EADDRINUSE:
        return f"{where}: the port is taken; pass another --port (0 picks one)"
    if error.errno == errno.EACCES:
        return f"{where}: ports below 1024 need privileges; pass a --port above 1023 (0 picks one)"
    if error.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
        return f"{where}: {host} is not an address of this machine; {_HOST_FIX}"
    return f"{where}; check --host and --port (0 picks a free port)"


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
    problem = None if static is not None else _host_problem(host)
    if problem is not None:
        raise ConfigError(problem)
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

    from backchannel.view import make_app, serve

    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.create_server((host, port), family=family)
    except OSError as error:
        raise ConfigError(_bind_problem(host, port, error)) from None
    if not _loopback(host):
        err.print(
            f"warning: serving on {host}: anyone who can reach this address can read these runs",
            markup=False,
        )
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
