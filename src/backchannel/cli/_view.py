"""`backchannel view RUN [RUN ...]`: browse transcripts in a local web app, or write a copy."""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

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
    from backchannel.view import RunReader, write_static

    if not 0 <= port <= 65535:
        raise ConfigError(f"--port {port} is not a port; pass 0..65535")
    readers: list[RunReader] = []
    try:
        for run in runs:
            readers.append(RunReader(run))
        if static is not None:
            page = write_static(readers, static)
            out.print(f"static copy written: open {page.resolve().as_uri()}", soft_wrap=True)
            return
        _serve(readers, host, port)
    finally:
        for reader in readers:
            reader.close()


def _serve(readers: list[RunReader], host: str, port: int) -> None:
    """Serve until Ctrl-C; the socket is bound first so a busy port is a clear error."""
    import asyncio
    import signal
    import socket

    from aiohttp import web

    from backchannel.view import make_app

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
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    hosts = {f"{shown}:{bound}", f"localhost:{bound}"} if _loopback(host) else None
    app = make_app(readers, hosts=hosts)
    out.print(f"viewer on http://{shown}:{bound}/  (Ctrl-C stops it)", soft_wrap=True)

    async def main() -> None:
        # Ctrl-C and SIGTERM end the server at once: open browser connections get a second.
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for number in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(number, stop.set)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await runner.setup()
        site = web.SockSite(runner, sock)
        await site.start()
        try:
            await stop.wait()
        finally:
            await runner.cleanup()

    asyncio.run(main())
    out.print("viewer stopped")
