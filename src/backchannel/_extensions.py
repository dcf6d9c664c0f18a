"""Extensions by name, shared by paradigms and providers: the built-in ones, ones registered in
this process, and installed packages' entry points. All are imported on first use, by one loader,
so a broken or duplicate extension is refused with the same one-line ConfigError for each kind."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from backchannel.errors import ConfigError

T = TypeVar("T")

BUILT_IN = "built in"
REGISTERED = "registered in this process"


@dataclass(frozen=True, slots=True)
class Source:
    """Where one extension comes from: a `package.module:attribute` target (or the object itself,
    when registered in this process) and who declared it."""

    name: str
    target: str
    origin: str
    value: Any = field(default=None, compare=False)


def load_target(target: str, what: str, hint: str) -> Any:
    """The object `package.module:attribute` names; ConfigError (one line, naming `what` and the
    fix) when its module cannot be imported or lacks the attribute."""
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name or not attribute:
        raise ConfigError(f"{what}: {target!r} is not package.module:Name; {hint}")
    try:
        value: Any = importlib.import_module(module_name)
    except Exception as error:  # a broken extension may raise anything while it is imported
        reason = " ".join(f"{type(error).__name__}: {error}".split())
        raise ConfigError(
            f"{what}: cannot import {module_name!r} ({reason}); install the package that "
            "provides it (or fix or uninstall it), or check the module path"
        ) from None
    try:
        for part in attribute.split("."):
            value = getattr(value, part)
    except AttributeError:
        raise ConfigError(f"{what}: module {module_name!r} has no {attribute!r}; {hint}") from None
    return value


class Registry(Generic[T]):
    """One kind of extension (`paradigm`, `provider`) by name.

    `built_in` maps names to targets; `group` is the entry-point group installed packages declare
    theirs in; `accept(value, what)` turns a loaded object into the extension or raises
    ConfigError. Two sources of one name (an entry point beside a built-in, two packages) are an
    error when that name is used, never a silent choice.
    """

    def __init__(
        self,
        kind: str,
        group: str,
        built_in: Mapping[str, str],
        accept: Callable[[Any, str], T],
        hint: str,
    ) -> None:
        self.kind = kind
        self.group = group
        self._built_in = dict(built_in)
        self._accept = accept
        self._hint = hint
        self._registered: dict[str, Source] = {}
        self._loaded: dict[Source, T] = {}
        self._discovered: tuple[tuple[str, ...], dict[str, list[Source]]] | None = None
        self._known: tuple[object, dict[str, list[Source]]] | None = None
        self._generation = 0

    def _entry_points(self) -> dict[str, list[Source]]:
        """The group's entry points, read once per `sys.path` (a test distribution added to the
        path is seen at once); one source per distinct target."""
        path = tuple(sys.path)
        if self._discovered is None or self._discovered[0] != path:
            found: dict[str, list[Source]] = {}
            for entry in entry_points(group=self.group):
                dist = getattr(entry, "dist", None)
                origin = f"entry point of {dist.name if dist is not None else 'a package'}"
                sources = found.setdefault(entry.name, [])
                if all(s.target != entry.value for s in sources):
                    sources.append(Source(entry.name, entry.value, origin))
            self._discovered = (path, found)
            self._generation += 1
        return self._discovered[1]

    def sources(self) -> dict[str, list[Source]]:
        """Every name this installation knows, with each of its sources (more than one is a
        conflict)."""
        entries = self._entry_points()
        state = (self._generation, tuple(self._registered.values()))
        if self._known is not None and self._known[0] == state:
            return self._known[1]
        found = {name: [Source(name, t, BUILT_IN)] for name, t in self._built_in.items()}
        for name, source in self._registered.items():
            found.setdefault(name, []).append(source)
        for name, sources in entries.items():
            known = found.setdefault(name, [])
            known += [s for s in sources if all(k.target != s.target for k in known)]
        self._known = (state, found)
        return found

    def names(self) -> list[str]:
        return sorted(self.sources())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.sources()

    def source(self, name: str) -> Source | None:
        """The one source of `name` (None when unknown); ConfigError when two declare it."""
        sources = self.sources().get(name)
        if not sources:
            return None
        if len(sources) > 1:
            listed = "; ".join(f"{s.target} ({s.origin})" for s in sources)
            raise ConfigError(
                f"{self.kind} {name!r} is declared twice: {listed}; uninstall one of the "
                "packages or rename its entry point"
            )
        return sources[0]

    def get(self, name: str) -> T | None:
        """The extension called `name`, imported on first use; None when no source names it."""
        source = self.source(name)
        if source is None:
            return None
        if source not in self._loaded:
            what = f"{self.kind} {name!r} ({source.origin}: {source.target})"
            if source.origin == REGISTERED:
                what = f"{self.kind} {name!r} ({REGISTERED})"
                value = source.value
            else:
                value = load_target(source.target, what, self._hint)
            self._loaded[source] = self._accept(value, what)
        return self._loaded[source]

    def load(self, target: str, label: str) -> T:
        """The extension a `package.module:attribute` path names directly."""
        what = f"{self.kind} {label!r}"
        return self._accept(load_target(target, what, self._hint), what)

    def register(self, name: str, value: Any) -> None:
        """Add `name` in this process (replacing one registered here before); ConfigError when
        a built-in or an installed package declares it."""
        if not name or "/" in name or ":" in name or "#" in name:
            raise ConfigError(f"{self.kind} name {name!r} must be non-empty, without / : or #")
        taken = [BUILT_IN] if name in self._built_in else []
        taken += [s.origin for s in self._entry_points().get(name, [])]
        if taken:
            raise ConfigError(
                f"{self.kind} {name!r} is already declared ({'; '.join(taken)}); choose another "
                "name"
            )
        self.unregister(name)
        source = Source(name, f"{getattr(value, '__module__', '?')}:{value!r}", REGISTERED, value)
        self._registered[name] = source

    def unregister(self, name: str) -> None:
        """Remove a name registered in this process (built-in and installed ones stay)."""
        source = self._registered.pop(name, None)
        if source is not None:
            self._loaded.pop(source, None)
