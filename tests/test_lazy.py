"""Lazy package re-exports: every name a package's `__all__` promises resolves, `dir()` lists
them, an unknown name is an AttributeError, and a name claimed by two modules is refused."""

from __future__ import annotations

import importlib
import sys
import types

import pytest

from backchannel._lazy import lazy_exports

PACKAGES = (
    "backchannel",
    "backchannel.analysis",
    "backchannel.backends",
    "backchannel.datasets",
    "backchannel.engine",
    "backchannel.experiment",
    "backchannel.judges",
    "backchannel.paradigms",
    "backchannel.report",
    "backchannel.store",
)


@pytest.mark.parametrize("name", PACKAGES)
def test_every_exported_name_resolves_and_is_listed(name: str) -> None:
    package = importlib.import_module(name)
    assert package.__all__, name
    for exported in package.__all__:
        assert getattr(package, exported) is not None, (name, exported)
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = package.no_such_name


def test_a_name_is_imported_from_its_module_on_first_use() -> None:
    module = types.ModuleType("lazy_demo")
    module.__dict__["__name__"] = "lazy_demo"
    getter, lister = lazy_exports(module.__dict__, {"json": ("dumps",), "os.path": ("join",)})
    assert "dumps" not in module.__dict__
    assert getter("dumps") is sys.modules["json"].dumps
    assert module.__dict__["dumps"] is sys.modules["json"].dumps  # cached: no second lookup
    assert getter("join") is importlib.import_module("os.path").join
    assert {"dumps", "join"} <= set(lister())
    with pytest.raises(AttributeError, match="module 'lazy_demo' has no attribute 'loads'"):
        getter("loads")


def test_a_name_exported_by_two_modules_is_refused() -> None:
    with pytest.raises(ValueError, match="'dumps' is exported by two modules"):
        lazy_exports({"__name__": "lazy_demo"}, {"json": ("dumps",), "pickle": ("dumps",)})
