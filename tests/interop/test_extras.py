"""The interop libraries are optional extras: the base install does not pull them in, and a
missing one is one line naming the `pip install`, exit 2."""

from __future__ import annotations

import sys
import tomllib
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path

import pytest
from conftest import invoke
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"
INTEROP = {"inspect": "inspect-ai", "hf": "datasets", "query": "duckdb"}


def _project() -> dict[str, object]:
    with PYPROJECT.open("rb") as handle:
        project: dict[str, object] = tomllib.load(handle)["project"]
    return project


def _closure(requirements: list[str]) -> set[str]:
    """Every distribution the requirements install (as installed here), without extras."""
    seen: set[str] = set()
    todo = [Requirement(r) for r in requirements]
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if name in seen:
            continue
        if requirement.marker is not None and not requirement.marker.evaluate({"extra": ""}):
            continue
        seen.add(name)
        try:
            found = distribution(requirement.name)
        except PackageNotFoundError:
            continue
        todo += [Requirement(r) for r in found.requires or []]
    return seen


def test_each_format_has_its_extra_and_the_tests_install_them() -> None:
    extras = _project()["optional-dependencies"]
    assert isinstance(extras, dict)
    dev = {canonicalize_name(Requirement(r).name) for r in extras["dev"]}
    for extra, package in INTEROP.items():
        assert [canonicalize_name(Requirement(r).name) for r in extras[extra]] == [package]
        assert package in dev


def test_the_base_install_does_not_pull_them_in() -> None:
    dependencies = _project()["dependencies"]
    assert isinstance(dependencies, list)
    closure = _closure(dependencies)
    assert "numpy" in closure and "pyarrow" in closure  # the walk follows requirements
    assert not closure & set(INTEROP.values())


@pytest.mark.parametrize(
    ("args", "module", "extra"),
    [
        (["export", "RUN", "--format", "inspect", "-o", "OUT"], "inspect_ai", "inspect"),
        (["export", "RUN", "--format", "hf", "-o", "OUT"], "datasets", "hf"),
        (["query", "RUN", "--sql", "SELECT 1"], "duckdb", "query"),
    ],
)
def test_a_missing_extra_is_one_line_naming_its_install(
    args: list[str],
    module: str,
    extra: str,
    hand_run: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # `import module` now raises ImportError
    filled = [str(hand_run) if a == "RUN" else str(tmp_path / "out") if a == "OUT" else a
              for a in args]  # fmt: skip
    result = invoke(*filled)
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert f"pip install 'backchannel[{extra}]'" in result.stderr
    assert module in result.stderr
    assert not (tmp_path / "out").exists()
