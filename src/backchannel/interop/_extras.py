"""Optional libraries of the interop formats: imported only when used, and a missing one is one
line naming the `pip install` that brings it."""

from __future__ import annotations

import importlib
from types import ModuleType

from backchannel.errors import ConfigError

EXTRAS: dict[str, tuple[str, str]] = {
    "inspect_ai": ("inspect", "the Inspect export"),
    "datasets": ("hf", "the Hugging Face export"),
    "duckdb": ("query", "querying runs with SQL"),
}
"""Module -> (the extra that installs it, what needs it)."""


def install_hint(module: str) -> str:
    """`the Inspect export needs inspect_ai: pip install 'backchannel[inspect]'`."""
    extra, what = EXTRAS[module]
    return f"{what} needs {module}; install it with: pip install 'backchannel[{extra}]'"


def need(module: str) -> ModuleType:
    """Import `module` (one of `EXTRAS`), or raise a ConfigError (exit 2) naming its extra."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(install_hint(module)) from None
