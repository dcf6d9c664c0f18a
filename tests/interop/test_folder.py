"""Interop exports are atomic and careful: a failed or killed export leaves the previous folder
or none, a full folder is replaced only with --force, and only when an export of the same
format wrote it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import invoke

from backchannel.errors import RunDirectoryError
from backchannel.interop._folder import MARKER, write_folder


def writer(*names: str, fail: bool = False):  # type: ignore[no-untyped-def]
    def write(folder: Path) -> list[str]:
        for name in names:
            (folder / name).write_text(name)
        if fail:
            raise RuntimeError("disk on fire")
        return list(names)

    return write


def listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_a_new_or_empty_folder_is_written_and_marked(tmp_path: Path) -> None:
    paths = write_folder(tmp_path / "new", "inspect", {"run_id": "r"}, writer("a"), force=False)
    assert paths == [tmp_path / "new" / "a"]
    assert listing(tmp_path / "new") == [MARKER, "a"]
    (tmp_path / "empty").mkdir()
    write_folder(tmp_path / "empty", "inspect", {}, writer("b"), force=False)
    assert listing(tmp_path / "empty") == [MARKER, "b"]
    assert listing(tmp_path) == ["empty", "new"]  # no staging folder left beside them


def test_a_full_folder_needs_force_and_an_export_of_the_same_format(tmp_path: Path) -> None:
    target = tmp_path / "out"
    write_folder(target, "inspect", {}, writer("old"), force=False)
    with pytest.raises(RunDirectoryError, match="pass --force"):
        write_folder(target, "inspect", {}, writer("new"), force=False)
    with pytest.raises(RunDirectoryError, match="not an earlier hf export"):
        write_folder(target, "hf", {}, writer("new"), force=True)
    assert listing(target) == [MARKER, "old"]
    write_folder(target, "inspect", {}, writer("new"), force=True)
    assert listing(target) == [MARKER, "new"]
    documents = tmp_path / "documents"
    documents.mkdir()
    (documents / "thesis.tex").write_text("years of work")
    with pytest.raises(RunDirectoryError, match="does not replace it"):
        write_folder(documents, "inspect", {}, writer("x"), force=True)
    assert (documents / "thesis.tex").read_text() == "years of work"
    with pytest.raises(RunDirectoryError, match="is a file"):
        write_folder(documents / "thesis.tex", "inspect", {}, writer("x"), force=True)


def test_a_failed_export_leaves_the_previous_folder(tmp_path: Path) -> None:
    target = tmp_path / "out"
    write_folder(target, "hf", {}, writer("old"), force=False)
    with pytest.raises(RuntimeError, match="disk on fire"):
        write_folder(target, "hf", {}, writer("half", fail=True), force=True)
    assert listing(target) == [MARKER, "old"]
    assert listing(tmp_path) == ["out"]


def test_a_killed_export_leaves_the_previous_folder_and_the_next_cleans_up(
    tmp_path: Path,
) -> None:
    target = tmp_path / "out"
    write_folder(target, "hf", {}, writer("old"), force=False)
    script = f"""
import os, signal
from pathlib import Path
from backchannel.interop._folder import write_folder

def write(folder):
    (folder / "half").write_text("half")
    os.kill(os.getpid(), signal.SIGKILL)

write_folder(Path({str(target)!r}), "hf", {{}}, write, force=True)
"""
    done = subprocess.run([sys.executable, "-c", script], check=False)
    assert done.returncode == -signal.SIGKILL
    assert listing(target) == [MARKER, "old"]
    assert [p.name.startswith(".out.export-") for p in tmp_path.iterdir()].count(True) == 1
    write_folder(target, "hf", {}, writer("new"), force=True)
    assert listing(target) == [MARKER, "new"]
    assert listing(tmp_path) == ["out"]  # the killed export's staging folder is gone


def test_a_kill_between_the_two_renames_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "out"
    write_folder(target, "hf", {}, writer("old"), force=False)
    real = os.replace
    calls: list[tuple[str, str]] = []

    def replace(src: str | Path, dst: str | Path) -> None:
        calls.append((str(src), str(dst)))
        if len(calls) == 2:
            raise KeyboardInterrupt  # stands for the process dying right here
        real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        write_folder(target, "hf", {}, writer("new"), force=True)
    monkeypatch.setattr(os, "replace", real)
    assert not target.exists()  # the old folder was moved aside, the new one not yet in
    write_folder(target, "hf", {}, writer("new"), force=False)
    assert listing(target) == [MARKER, "new"]
    assert listing(tmp_path) == ["out"]


def test_the_command_refuses_to_overwrite_without_force(hand_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "logs"
    assert invoke("export", hand_run, "--format", "inspect", "-o", out).exit_code == 0
    first = {p.name: p.stat().st_mtime_ns for p in out.iterdir()}
    again = invoke("export", hand_run, "--format", "inspect", "-o", out)
    assert again.exit_code == 2
    assert again.stderr.startswith("error: ") and "pass --force" in again.stderr
    assert {p.name: p.stat().st_mtime_ns for p in out.iterdir()} == first
    forced = invoke("export", hand_run, "--format", "inspect", "-o", out, "--force")
    assert forced.exit_code == 0, forced.stderr
    into_run = invoke("export", hand_run, "--format", "inspect", "-o", hand_run, "--force")
    assert into_run.exit_code == 2 and "does not replace it" in into_run.stderr
    assert (hand_run / "run.sqlite").is_file()


def test_an_unwritable_folder_is_one_line(hand_run: Path, tmp_path: Path) -> None:
    if os.geteuid() == 0:
        locked = Path("/proc/interop-export")  # even root cannot create folders here
    else:
        locked = tmp_path / "locked" / "out"
        locked.parent.mkdir(mode=0o500)
    result = invoke("export", hand_run, "--format", "inspect", "-o", locked)
    assert result.exit_code == 2
    assert "cannot write the export into" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
