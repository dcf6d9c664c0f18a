"""`backchannel view`: clear refusals (exit 2) and the static copy."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
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
    assert (copy / ".backchannel-static").is_file()  # the mark that lets a new copy replace it
    # writing again replaces the copy; a non-empty foreign directory is refused
    (copy / "data" / "stale.js").write_text("from the earlier copy")
    assert invoke(str(run), "--static", str(copy))[0] == 0
    assert not (copy / "data" / "stale.js").exists() and (copy / "index.html").is_file()
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    code, output = invoke(str(run), "--static", str(other))
    assert code == 2 and "not empty" in output and (other / "notes.txt").exists()


def test_a_folder_the_copy_did_not_write_is_never_replaced(tmp_path: Path) -> None:
    # An index.html of someone else's does not make a folder a static copy.
    run = peer_pressure_run(tmp_path / "run")
    site = tmp_path / "site"
    site.mkdir()
    (site / "index.html").write_text("<p>my page</p>")
    (site / "notes.txt").write_text("mine")
    code, output = invoke(str(run), "--static", str(site))
    assert code == 2 and "holds no static copy" in output and "nothing was changed" in output
    assert sorted(p.name for p in site.iterdir()) == ["index.html", "notes.txt"]
    assert (site / "index.html").read_text() == "<p>my page</p>"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    empty = tmp_path / "empty"
    empty.mkdir()
    assert invoke(str(run), "--static", str(empty))[0] == 0  # an empty folder is fine


def test_staging_folders_of_a_killed_copy_are_removed_by_the_next(tmp_path: Path) -> None:
    run = peer_pressure_run(tmp_path / "run")
    for name in (".copy.static-abc123", ".copy.static-def456/old"):
        (tmp_path / name).mkdir(parents=True)
        (tmp_path / name / "index.html").write_text("half written")
    (tmp_path / ".other.static-keep").mkdir()  # another copy's staging is not ours to remove
    assert invoke(str(run), "--static", str(tmp_path / "copy"))[0] == 0
    hidden = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("."))
    assert hidden == [".other.static-keep"]


@pytest.mark.slow
def test_a_copy_killed_while_writing_leaves_nothing_the_next_copy_keeps(tmp_path: Path) -> None:
    run = peer_pressure_run(tmp_path / "run", plain=400)
    command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run), "--static"]
    process = subprocess.Popen([*command, str(tmp_path / "copy")], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not list(tmp_path.glob(".copy.static-*/data")) and time.monotonic() < deadline:
        time.sleep(0.01)
    process.kill()
    process.wait(timeout=20)
    assert list(tmp_path.glob(".copy.static-*")), "the copy was not caught while writing"
    assert not (tmp_path / "copy").exists()
    done = subprocess.run([*command, str(tmp_path / "copy")], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not list(tmp_path.glob(".copy.static-*"))
    assert (tmp_path / "copy" / "index.html").is_file()


def test_a_one_line_error_loads_neither_the_web_server_nor_pandas(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from backchannel.cli import app\n"
        f"result = CliRunner().invoke(app, ['view', {str(tmp_path / 'nowhere')!r}])\n"
        "loaded = [m for m in ('aiohttp', 'pandas', 'networkx', 'backchannel.paradigms._base')"
        " if m in sys.modules]\n"
        "print(result.exit_code, loaded, result.output.strip())\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("2 [] error:") and "is not a directory" in done.stdout


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


@pytest.mark.slow
def test_sigterm_right_after_start_prints_no_resume_message(tmp_path: Path) -> None:
    run = peer_pressure_run(tmp_path / "run")
    command = [str(Path(sys.executable).parent / "backchannel"), "view", str(run), "--port", "0"]
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "COLUMNS": "200", "PYTHONWARNINGS": "default"}
    for delay in (0.0, 0.02, 0.2):
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        assert process.stdout is not None
        assert "viewer on http://127.0.0.1:" in process.stdout.readline()
        time.sleep(delay)
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=20)
        assert process.returncode == 0, err
        assert out.strip() == "viewer stopped", out
        assert err == "", err  # no "resume" message, no asyncio warning, no traceback


@pytest.mark.slow
def test_a_host_that_is_no_address_is_refused_before_any_warning(tmp_path: Path) -> None:
    run = peer_pressure_run(tmp_path / "run")
    code, output = invoke(str(run), "--host", "999.1.1.1", "--port", "0")
    assert code == 2 and "--host 999.1.1.1 is not an IP address" in output
    assert "warning" not in output and "--port" not in output
