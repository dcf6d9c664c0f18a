"""`backchannel view` as served: aiohttp's own answers carry the policy, requests it cannot
parse or that name no host are refused in one line, and a run store deleted while served gives
a clear answer; the terminal never shows a traceback."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from backchannel.view import CSP

from ._build import peer_pressure_run

pytestmark = pytest.mark.slow


class Served:
    def __init__(self, run: Path) -> None:
        command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run)]
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
        self.process = subprocess.Popen(
            [*command, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.process.stdout is not None
        found = re.search(r"127\.0\.0\.1:(\d+)/", self.process.stdout.readline())
        assert found
        self.port = int(found.group(1))

    def raw(self, request: bytes) -> tuple[str, dict[str, str], str]:
        """Status line, headers and body of the answer to `request` sent as bytes."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=20) as sock:
            sock.sendall(request)
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        head, _, body = answer.decode("latin-1").partition("\r\n\r\n")
        status, *lines = head.split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines if ": " in line)
        return status, headers, body

    def get(self, path: str) -> tuple[str, dict[str, str], str]:
        host = f"Host: 127.0.0.1:{self.port}\r\nConnection: close\r\n"
        return self.raw(f"GET {path} HTTP/1.1\r\n{host}\r\n".encode())

    def stop(self) -> str:
        self.process.terminate()
        _, err = self.process.communicate(timeout=20)
        return err


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    server = Served(peer_pressure_run(tmp_path / "run"))
    yield server
    if server.process.poll() is None:
        server.stop()


def test_every_answer_of_aiohttp_carries_the_policy(served: Served) -> None:
    host = f"Host: 127.0.0.1:{served.port}\r\nConnection: close\r\n"
    answers = {
        "no host": served.raw(b"GET /api/runs HTTP/1.0\r\n\r\n"),
        "not http": served.raw(b"GARBAGE\r\n\r\n"),
        "header too long": served.raw(f"GET / HTTP/1.1\r\n{host}X: {'a' * 9000}\r\n\r\n".encode()),
        "no such page": served.get("/nothing"),
        "no such file": served.get("/static/nothing.js"),
        "outside the folder": served.get("/static/%2e%2e/_server.py"),
        "method": served.raw(f"DELETE /api/runs HTTP/1.1\r\n{host}\r\n".encode()),
        "foreign host": served.raw(
            b"GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
        ),
    }
    codes = {name: status.split()[1] for name, (status, _, _) in answers.items()}
    assert codes == {
        "no host": "421", "not http": "400", "header too long": "400", "no such page": "404",
        "no such file": "404", "outside the folder": "404", "method": "405", "foreign host": "421",
    }  # fmt: skip
    for name, (_, headers, _) in answers.items():
        assert headers.get("Content-Security-Policy") == CSP, name
        assert headers.get("X-Content-Type-Options") == "nosniff", name
    err = served.stop()
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) <= 2  # the two requests it could not parse, one line each


def test_a_store_deleted_while_served_gets_a_clear_answer(served: Served, tmp_path: Path) -> None:
    assert served.get("/api/runs")[0].split()[1] == "200"
    shutil.rmtree(tmp_path / "run")
    for path in ("/api/runs", "/api/runs/0/conversations", "/api/runs/0/summary"):
        status, headers, body = served.get(path)
        assert status.split()[1] == "503", (path, status)
        assert "deleted or moved while the viewer showed it" in body
        assert headers["Content-Security-Policy"] == CSP
    err = served.stop()
    assert err == "" and served.process.returncode == 0
