"""Run the fake OpenAI-compatible server in its own process.

``python -m backchannel.testing.fake_openai --port 0 --latency 0.2 --slots 8`` prints the base URL
on the first stdout line, then serves until SIGINT or SIGTERM. A benchmark runs it out of process
so the server does not share CPU time with the client's event loop.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from backchannel.testing._fake_openai import REASONING_SHAPES, FakeOpenAIServer


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m backchannel.testing.fake_openai",
        description="A fake OpenAI-compatible chat-completions server on 127.0.0.1.",
    )
    parser.add_argument("--port", type=int, default=0, help="port to bind (0 picks a free one)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds per request")
    parser.add_argument("--slots", type=int, default=8, help="requests served at once")
    parser.add_argument(
        "--model", action="append", dest="models", help="model name to list (repeatable)"
    )
    parser.add_argument("--require-api-key", default=None, help="answer 401 unless this key")
    parser.add_argument(
        "--max-queue", type=int, default=None, help="answer 429 when this many requests wait"
    )
    parser.add_argument(
        "--reasoning",
        choices=REASONING_SHAPES,
        default=None,
        help="answer as a reasoning model, in this shape",
    )
    return parser.parse_args(argv)


async def _serve(args: argparse.Namespace) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    server = FakeOpenAIServer(
        latency=args.latency,
        slots=args.slots,
        models=tuple(args.models or ("fake-model",)),
        require_api_key=args.require_api_key,
        port=args.port,
        reasoning=args.reasoning,
        max_queue=args.max_queue,
    )
    async with server:
        print(server.base_url, flush=True)
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    """Serve until interrupted; returns the process exit status."""
    args = _parse_args(argv)
    try:
        asyncio.run(_serve(args))
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
