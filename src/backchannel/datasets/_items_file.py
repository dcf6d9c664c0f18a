"""Screened item files: one JSON object of FactItem fields per line."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable
from pathlib import Path

from backchannel.datasets._io import file_format, iter_rows, read_text, require
from backchannel.datasets._item import DatasetError, FactItem, ItemSet

_FIELDS = tuple(f.name for f in dataclasses.fields(FactItem))
_HINT = "an item file row needs every FactItem field: " + ", ".join(_FIELDS)


def write_items(items: Iterable[FactItem], path: str | Path) -> Path:
    """Write items as JSONL (one object per line, aliases as lists); returns the path."""
    path = Path(path)
    lines = [json.dumps(dataclasses.asdict(item), ensure_ascii=False) for item in items]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def read_items(path: str | Path) -> ItemSet:
    """Read an item file written by :func:`write_items` (.jsonl, optionally gzipped)."""
    path = Path(path)
    fmt = file_format(path, (".jsonl",))
    items: list[FactItem] = []
    for where, record in iter_rows(path, read_text(path), fmt):
        values = {name: require(path, where, record, name, _HINT) for name in _FIELDS}
        for name in ("true_aliases", "false_aliases"):
            value = values[name]
            if not isinstance(value, list):
                raise DatasetError(f"{path}: {where} field {name!r} must be a list of strings")
            values[name] = tuple(value)
        try:
            items.append(FactItem(**values))
        except ValueError as exc:
            raise DatasetError(f"{path}: {where} is not a valid item: {exc}") from None
    try:
        return ItemSet(source=str(path), items=tuple(items))
    except ValueError as exc:
        raise DatasetError(f"{path}: {exc}; give each row its own item_id") from None


load_items = read_items
