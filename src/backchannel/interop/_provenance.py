"""Where a run's items come from and under which license, for a dataset card.

Only what the package can vouch for is named: a shipped dataset subset (its `PROVENANCE.md`
and license files), and data shipped inside the paradigm's own package folder. Items from a
file the user gave, or written in the experiment file, are counted and left to their author.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from backchannel.analysis import RunTables
    from backchannel.paradigms import Paradigm

PROVENANCE = "PROVENANCE.md"
_SPDX = {
    "mit": "mit",
    "apache license 2.0": "apache-2.0",
    "apache-2.0": "apache-2.0",
    "apache 2.0": "apache-2.0",
    "cc by 4.0": "cc-by-4.0",
    "cc-by-4.0": "cc-by-4.0",
    "cc by-sa 4.0": "cc-by-sa-4.0",
    "cc0 1.0": "cc0-1.0",
}
_LICENSE_LINE = re.compile(r"[Ll]icen[cs]e(?::| is) ([A-Za-z][A-Za-z0-9 .\-]*?)\s*(?:\(|,|\.\s|$)")


@dataclass(frozen=True, slots=True)
class ItemSource:
    """One documented source of items: what it is, its licenses and its provenance text."""

    name: str
    where: str
    licenses: tuple[str, ...]
    provenance: str
    items: int

    @property
    def spdx(self) -> tuple[str, ...]:
        """The licenses as Hugging Face license ids (`other` for one it does not know)."""
        return tuple(_SPDX.get(name.strip().lower(), "other") for name in self.licenses)


@dataclass(frozen=True, slots=True)
class Provenance:
    """The documented sources, and the items none of them covers (by item id)."""

    sources: tuple[ItemSource, ...]
    undocumented: tuple[str, ...]

    @property
    def license(self) -> str:
        """One license id for the card: the sources' own when they all agree and every item
        is covered, else `other`."""
        ids = {spdx for source in self.sources for spdx in source.spdx}
        if self.undocumented or len(ids) != 1:
            return "other"
        return ids.pop()


def provenance(tables: RunTables, paradigm: Paradigm[Any] | None) -> Provenance:
    """The sources of the run's items: shipped subsets named by the items' id prefix (unless
    the experiment gave a file of that name), then the paradigm's own shipped data."""
    from backchannel.datasets import SHIPPED

    item_ids = list(dict.fromkeys(tables.conversations["item_id"].astype(str)))
    given = _datasets_from_files(tables.manifest.get("config_resolved") or {})
    sources: list[ItemSource] = []
    covered: set[str] = set()
    for name in SHIPPED:
        mine = [i for i in item_ids if i.split(":", 1)[0] == name and ":" in i]
        if not mine or name in given:
            continue
        folder = resources.files("backchannel.datasets").joinpath("data", name)
        text = folder.joinpath(PROVENANCE).read_text(encoding="utf-8")
        where = f"backchannel.datasets: data/{name}/"
        sources.append(ItemSource(name, where, _licenses(text), text, len(mine)))
        covered.update(mine)
    rest = [i for i in item_ids if i not in covered]
    if rest and paradigm is not None:
        package = _package(paradigm)
        for path, text in _paradigm_provenance(package):
            where = f"{package}: {path}"
            sources.append(ItemSource(paradigm.name, where, _licenses(text), text, len(rest)))
            covered.update(rest)
    return Provenance(tuple(sources), tuple(i for i in item_ids if i not in covered))


def _licenses(text: str) -> tuple[str, ...]:
    """The license names a PROVENANCE.md states (`License: MIT (...)`), in order."""
    found = [match.group(1).strip() for match in _LICENSE_LINE.finditer(text)]
    return tuple(dict.fromkeys(found))


def _datasets_from_files(config: Any) -> set[str]:
    """Names of datasets the experiment read from a file (a `{name, path}` dataset source
    with a path): their items are not the shipped subset of the same name."""
    found: set[str] = set()
    for node in _walk(config):
        if isinstance(node, dict) and isinstance(node.get("name"), str) and node.get("path"):
            found.add(node["name"])
    return found


def _walk(value: Any) -> Iterator[Any]:
    yield value
    if isinstance(value, dict):
        for child in value.values():
            yield from _walk(child)
    elif isinstance(value, list):
        for child in value:
            yield from _walk(child)


def _package(paradigm: Paradigm[Any]) -> str:
    return sys.modules[type(paradigm).__module__].__package__ or ""


def _paradigm_provenance(package: str) -> list[tuple[str, str]]:
    """`PROVENANCE.md` files shipped in the paradigm's package folder (relative path, text)."""
    if not package:
        return []
    root = Path(str(resources.files(package)))
    if not root.is_dir():
        return []
    return [
        (str(path.relative_to(root)), path.read_text(encoding="utf-8"))
        for path in sorted(root.rglob(PROVENANCE))
    ]
