"""Reports are written whole or not at all, show a banner at the top, and neutralise bidi and
control characters (HTML) and spreadsheet formulas (CSV)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from backchannel.report import Report


def report_with(rows: int, banner: str | None = None) -> Report:
    report = Report("Atomic")
    if banner:
        report.banner(banner)
    report.section("Tables")
    report.table("first", pd.DataFrame({"n": list(range(rows))}))
    report.table("second", pd.DataFrame({"n": list(range(rows))}))
    return report


def test_a_failed_write_leaves_the_old_report_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "report"
    report_with(2).write(folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    real = pd.DataFrame.to_csv
    calls: list[int] = []

    def second_fails(frame: pd.DataFrame, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise OSError("killed")
        return real(frame, *args, **kwargs)

    monkeypatch.setattr(pd.DataFrame, "to_csv", second_fails)
    with pytest.raises(OSError, match="killed"):
        report_with(5).write(folder)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # no staging left

    report_with(5).write(folder)
    assert pd.read_csv(folder / "first.csv")["n"].tolist() == [0, 1, 2, 3, 4]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


def test_a_new_report_replaces_an_old_report_folder_whole(tmp_path: Path) -> None:
    folder = tmp_path / "report"
    old = Report("Old")
    old.table("gone", pd.DataFrame({"x": [1]}))
    old.write(folder)
    report_with(1).write(folder)
    assert sorted(p.name for p in folder.iterdir()) == ["first.csv", "report.html", "second.csv"]


def test_a_folder_with_other_files_keeps_them(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    report_with(1).write(tmp_path)
    assert (tmp_path / "notes.txt").read_text() == "mine"
    assert (tmp_path / "report.html").is_file() and (tmp_path / "first.csv").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_stale_staging_folders_are_removed(tmp_path: Path) -> None:
    stale = tmp_path / ".report.report-dead0000"
    stale.mkdir()
    (stale / "report.html").write_text("half")
    report_with(1).write(tmp_path / "report")
    assert not stale.exists()


def test_the_banner_is_at_the_top(tmp_path: Path) -> None:
    page = report_with(1, banner="This run is still going.").to_html()
    assert page.index('class="note banner"') < page.index("<section")
    assert page.index("<h1>") < page.index('class="note banner"')


def test_bidi_and_controls_in_model_text_are_visible_not_obeyed(tmp_path: Path) -> None:
    report = Report("Title \u202eesrever")
    report.section("Heading \u202egnp.exe")
    report.text("nul\x00 and bell\x07")
    report.table("t", pd.DataFrame({"text": ["=cmd|' /C calc'!A0", "-1", "\u2066x\u2069"]}))
    path = report.write(tmp_path)
    page = path.read_text(encoding="utf-8")
    for raw in ("\u202e", "\x00", "\x07", "\u2066", "\u2069"):
        assert raw not in page
    assert "Heading &lt;U+202E&gt;gnp.exe" in page
    assert "nul&lt;U+0000&gt; and bell&lt;U+0007&gt;" in page
    cells = (tmp_path / "t.csv").read_text(encoding="utf-8").splitlines()[1:]
    assert cells == ["'=cmd|' /C calc'!A0", "'-1", "<U+2066>x<U+2069>"]
