"""The small dataset subsets shipped inside the package."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Final, Literal

from backchannel.datasets._counterfact import load_counterfact
from backchannel.datasets._item import ItemSet
from backchannel.datasets._popqa import load_popqa
from backchannel.datasets._simpleqa import load_simpleqa

ShippedName = Literal["counterfact", "popqa", "simpleqa"]
SHIPPED: Final = ("counterfact", "popqa", "simpleqa")
SHIPPED_FILES: Final[dict[str, str]] = {
    "counterfact": "counterfact.json",
    "popqa": "popqa.jsonl",
    "simpleqa": "simpleqa.csv",
}


def load_shipped(name: ShippedName, limit: int | None = None, *, seed: int = 0) -> ItemSet:
    """Load a shipped subset (in its original format) with the dataset's loader.

    ``limit`` keeps the first items in file order; false answers are drawn from the whole subset.
    """
    if name not in SHIPPED_FILES:
        raise ValueError(f"unknown shipped dataset {name!r}; choose one of {SHIPPED}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0, got {limit}")
    resource = resources.files("backchannel.datasets").joinpath("data", name, SHIPPED_FILES[name])
    with resources.as_file(resource) as path:
        loaded = _load(name, Path(path), seed)
    return loaded.first(limit)


def _load(name: str, path: Path, seed: int) -> ItemSet:
    if name == "counterfact":
        return load_counterfact(path)
    if name == "popqa":
        return load_popqa(path, seed=seed)
    return load_simpleqa(path, seed=seed)
