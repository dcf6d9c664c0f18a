"""Paradigms from installed distributions go through the loader providers share: a broken or
duplicate entry point is one ConfigError naming the package and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from backchannel.errors import ConfigError
from backchannel.paradigms import get_paradigm, registered
from backchannel.paradigms.discussion import Discussion


def install(root: Path, dist: str, entry: str, code: str = "") -> None:
    info = root / f"{dist}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[backchannel.paradigms]\n{entry}\n")
    if code:
        (root / f"{dist}.py").write_text(code)


def test_an_installed_paradigm_is_found_by_name(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    install(
        tmp_path,
        "talk_paradigm",
        "talk = talk_paradigm:Talk",
        "from backchannel.paradigms.discussion import Discussion\n\n"
        "class Talk(Discussion):\n    name = 'talk'\n",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert registered()["talk"] == "talk_paradigm:Talk"
    assert isinstance(get_paradigm("talk"), Discussion)


def test_a_broken_paradigm_entry_point_names_its_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    install(tmp_path, "bad_paradigm", "bad = bad_paradigm:Bad", "import nowhere_to_be_found\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError) as raised:
        get_paradigm("bad")
    assert str(raised.value) == (
        "paradigm 'bad' (entry point of bad_paradigm: bad_paradigm:Bad): cannot import "
        "'bad_paradigm' (ModuleNotFoundError: No module named 'nowhere_to_be_found'); install "
        "the package that provides it (or fix or uninstall it), or check the module path"
    )


def test_a_paradigm_name_declared_twice_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    install(tmp_path, "dyad_again", "dyad = dyad_again:Dyad")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ConfigError) as raised:
        get_paradigm("dyad")
    assert str(raised.value) == (
        "paradigm 'dyad' is declared twice: backchannel.paradigms.dyad:Dyad (built in); "
        "dyad_again:Dyad (entry point of dyad_again); uninstall one of the packages or rename "
        "its entry point"
    )
    assert isinstance(get_paradigm("discussion"), Discussion)  # other names are unaffected
