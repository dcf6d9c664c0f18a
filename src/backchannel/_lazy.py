"""Lazy re-exports for package `__init__` files: a name is imported from its module on first use,
so importing a package (and the command line) does not load pandas, scipy or openai until a
command needs them."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(
    namespace: dict[str, Any], modules: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """Module `__getattr__` and `__dir__` for the package whose `globals()` is `namespace`; its
    names live in `modules` (`{"._store": ("RunStore",)}`, a leading dot relative to it)."""
    package = str(namespace["__name__"])
    where: dict[str, str] = {}
    for module, names in modules.items():
        target = package + module if module.startswith(".") else module
        for name in names:
            if name in where:
                raise ValueError(f"{package}: {name!r} is exported by two modules")
            where[name] = target

    def __getattr__(name: str) -> Any:
        target = where.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(target), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
