"""One dispatch for configured datasets: a shipped subset, or a file in a known format."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backchannel._files import path_problem
from backchannel.datasets._counterfact import load_counterfact
from backchannel.datasets._item import ItemSet
from backchannel.datasets._items_file import load_items
from backchannel.datasets._popqa import load_popqa
from backchannel.datasets._shipped import SHIPPED, load_shipped
from backchannel.datasets._simpleqa import load_simpleqa
from backchannel.errors import ConfigError

DatasetFormat = Literal["counterfact", "popqa", "simpleqa", "items"]
DATASET_FORMATS: tuple[DatasetFormat, ...] = ("counterfact", "popqa", "simpleqa", "items")


class DatasetSource(BaseModel):
    """Where one dataset's items come from: a shipped subset, or a file in a known format."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="The dataset's name: a `dataset` factor level and the prefix of its item ids. "
        "Without `path`, one of the shipped subsets: counterfact, popqa, simpleqa.",
    )
    path: str | None = Field(None, description="A data file; else the shipped subset `name`.")
    format: DatasetFormat | None = Field(
        None,
        description="The file's format: counterfact, popqa, simpleqa (original formats) or items "
        "(a screened item file from `backchannel screen`). Required with `path`.",
    )
    limit: int | None = Field(None, ge=1, description="Use only the first N items of the file.")

    @model_validator(mode="after")
    def _source_is_known(self) -> DatasetSource:
        if self.path is None and self.name not in SHIPPED:
            raise ValueError(
                f"dataset {self.name!r} has no path and is not shipped; give a path and format, "
                f"or use one of {', '.join(SHIPPED)}"
            )
        if self.path is not None and self.format is None:
            raise ValueError(f"dataset {self.name!r}: a path needs a format")
        return self


def load_source(source: DatasetSource) -> ItemSet:
    """The items of one configured dataset (false answers drawn with seed 0, so they are the
    same in every experiment and every command)."""
    if source.path is None:
        return load_shipped(source.name, source.limit)  # type: ignore[arg-type]
    path = Path(source.path)
    where = f"dataset {source.name!r}"
    problem = path_problem(path)
    if problem == "is a directory":
        raise ConfigError(f"{where}: {path} is a directory; give the data file")
    if problem is not None and problem.startswith("does not exist"):
        raise ConfigError(f"{where}: no such file {path}; check the dataset's path")
    if problem is not None:
        raise ConfigError(f"{where}: {path} {problem}; give a data file saved on disk")
    if path.stat().st_size == 0:
        raise ConfigError(
            f"{where}: {path} is empty (0 bytes); fill it with {source.format} rows "
            "(docs/datasets.md) or leave the dataset out"
        )
    loaded = _load_file(str(source.format), path)
    if not loaded.items:
        raise ConfigError(f"{where}: {path} {_why_empty(loaded)}")
    return loaded.first(source.limit)


def _why_empty(loaded: ItemSet) -> str:
    """Why a file gave no items: no rows at all, or every row dropped (the first one's reason)."""
    if not loaded.dropped:
        return "holds no rows (only blank lines or a header); add rows of items (docs/datasets.md)"
    first = loaded.dropped[0]
    more = len(loaded.dropped) - 1
    return (
        f"has {len(loaded.dropped)} rows and none can be asked: {first.item_id}: {first.reason}"
        + (f" (and {more} more rows)" if more else "")
        + "; give the rows usable false answers (docs/datasets.md)"
    )


def _load_file(format: str, path: Path) -> ItemSet:
    if format == "counterfact":
        return load_counterfact(path)
    if format == "popqa":
        return load_popqa(path)
    if format == "simpleqa":
        return load_simpleqa(path)
    return load_items(path)
