"""`backchannel view`: clear refusals (exit 2) and the static copy."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from typer.testing import CliRunner

from backchannel.cli import app

from ._build import peer_pressure_run


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["view", *args])
    return result.exit_code, result.output


def test_a_missing_or_damaged_run_ends_with_exit_2_and_one_line(tmp_path: Path) -> None:
    code, output = invoke(str(tmp_path / "nowhere"))
    assert code == 2 and "is not a directory" in output and "Traceback" not in output
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "run.sqlite").write_bytes(b"\x00garbage" * 512)
    code, output = invoke(str(damaged))
    assert code == 2 and "damaged" in output and "Traceback" not in output
    assert len(output.strip().splitlines()) <= 2  # one message (the console may wrap it)


def test_a_busy_port_and_a_bad_port_are_refused(tmp_path: Path) -> None:
    run = peer_pressure_run(tmp_path / "run")
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        code, output = invoke(str(run), "--port", str(port))
    assert code == 2 and "pass another --port" in output
    code, output = invoke(str(run), "--port", "70000")
    assert code == 2 and "not a port" in output


def test_the_static_copy_holds_page_assets_and_every_conversation(tmp_path: Path) -> None:
    run = peer_pressure_run(tmp_path / "run")
    code, output = invoke(str(run), "--static", str(tmp_path / "copy"))
    assert code == 0, output
    copy = tmp_path / "copy"
    assert (copy / "index.html").is_file() and (copy / "static" / "core.js").is_file()
    assert len(list((copy / "data" / "r0").glob("c*.js"))) == 7
    page = (copy / "index.html").read_text()
    assert "Content-Security-Policy" in page and "<script>" not in page
    data = (copy / "data" / "r0" / "c0.js").read_text()
    assert "<" not in data  # model text cannot close or open any tag in a data file
    # writing again replaces the copy; a non-empty foreign directory is refused
    assert invoke(str(run), "--static", str(copy))[0] == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    code, output = invoke(str(run), "--static", str(other))
    assert code == 2 and "not empty" in output and (other / "notes.txt").exists()


@pytest.mark.slow
def test_a_non_loopback_host_must_be_asked_for_and_warns(tmp_path: Path) -> None:
    run = peer_pressure_run(tmp_path / "run")
    command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run)]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    for host, warned in (("127.0.0.1", False), ("0.0.0.0", True)):
        process = subprocess.Popen(
            [*command, "--host", host, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=env,
        )
        try:
            assert process.stdout is not None
            lines = [process.stdout.readline()]
            if warned:
                lines.append(process.stdout.readline())
            text = "".join(lines)
            assert ("warning: serving on 0.0.0.0" in text) is warned
            assert f"viewer on http://{host}:" in text
        finally:
            process.terminate()
            process.wait(timeout=20)


@pytest.mark.slow
def test_sigterm_stops_the_server_cleanly(tmp_path: Path) -> None:
    run = peer_pressure_run(tmp_path / "run")
    command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run), "--port", "0"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200"}
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    assert process.stdout is not None
    url = process.stdout.readline().split()[2]
    with urllib.request.urlopen(url + "api/runs", timeout=20) as response:
        assert response.status == 200
    process.terminate()
    rest = process.communicate(timeout=20)[0]
    assert process.returncode == 0 and "viewer stopped" in rest and "Traceback" not in rest
