"""Runs shared by the interop tests (made once per session: they are only read)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ._runs import example_run, hand_built_run, reseeded_quickstart


@pytest.fixture(scope="session")
def quickstart_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return example_run(tmp_path_factory.mktemp("quickstart") / "run", "quickstart.yaml")


@pytest.fixture(scope="session")
def reseeded_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return reseeded_quickstart(tmp_path_factory.mktemp("reseeded") / "run", 8)


@pytest.fixture(scope="session")
def testimony_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("testimony") / "run"
    return example_run(directory, "testimony_offline.yaml", "--limit", "4")


@pytest.fixture(scope="session")
def hand_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return hand_built_run(tmp_path_factory.mktemp("hand") / "run")
