"""Reading rows from .json, .jsonl, .csv and .tsv files (optionally gzipped)."""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from backchannel.datasets._item import DatasetError

Row = tuple[str, Mapping[str, Any]]
"""A row's location ("row 3", "row 3 of 'test'") and its fields."""


def _suffixes(path: Path) -> tuple[str, bool]:
    """The format suffix of ``path`` (".json", ".csv", ...) and whether it is gzipped."""
    suffixes = [s.lower() for s in path.suffixes]
    gz = bool(suffixes) and suffixes[-1] == ".gz"
    if gz:
        suffixes = suffixes[:-1]
    return (suffixes[-1] if suffixes else ""), gz


def read_text(path: Path) -> str:
    """The file's text, decompressing .gz."""
    try:
        if _suffixes(path)[1]:
            with gzip.open(path, "rt", encoding="utf-8") as handle:
                return handle.read()
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DatasetError(f"{path}: no such file; pass the path of a dataset file") from None
    except IsADirectoryError:
        raise DatasetError(f"{path} is a directory; pass the path of a dataset file") from None
    except UnicodeDecodeError as exc:
        raise DatasetError(
            f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); "
            "save the dataset as UTF-8"
        ) from None
    except (gzip.BadGzipFile, EOFError) as exc:
        raise DatasetError(f"{path}: not a complete gzip file ({exc}); download it again") from None
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read the dataset file: {exc.strerror}") from None


def file_format(path: Path, allowed: tuple[str, ...]) -> str:
    """The format of ``path`` among ``allowed``; a clear error names the accepted suffixes."""
    fmt, _ = _suffixes(path)
    if fmt not in allowed:
        accepted = ", ".join(f"{a}[.gz]" for a in allowed)
        raise DatasetError(f"{path}: unsupported file type {fmt or '(none)'!r}; use {accepted}")
    return fmt


def iter_rows(path: Path, text: str, fmt: str) -> Iterator[Row]:
    """Rows of a JSON array, a JSONL file or a CSV/TSV file with a header, numbered from 1."""
    if fmt == ".json":
        data = parse_json(path, text)
        if not isinstance(data, list):
            raise DatasetError(
                f"{path}: expected a JSON array of records, got {type(data).__name__}"
            )
        yield from records(path, data, "")
    elif fmt == ".jsonl":
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DatasetError(
                    f"{path}: row {number} is not valid JSON ({exc.msg}); "
                    "write one JSON object per line"
                ) from None
            yield from records(path, [record], "", start=number)
    else:
        delimiter = "\t" if fmt == ".tsv" else ","
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
        for number, record in enumerate(reader, start=1):
            if None in record:
                raise DatasetError(
                    f"{path}: row {number} has more cells than the header; quote cells that "
                    f"contain {delimiter!r}"
                )
            yield f"row {number}", record


def parse_json(path: Path, text: str) -> Any:
    """Parse a whole JSON document, naming the file on failure."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}); check the file is complete"
        ) from None


def records(path: Path, data: list[Any], part: str, start: int = 1) -> Iterator[Row]:
    """Number the records of a JSON list, checking each is an object."""
    where = f" of {part!r}" if part else ""
    for number, record in enumerate(data, start=start):
        if not isinstance(record, Mapping):
            raise DatasetError(
                f"{path}: row {number}{where} is a {type(record).__name__}, not a JSON object"
            )
        yield f"row {number}{where}", record


def require(path: Path, where: str, record: Mapping[str, Any], name: str, hint: str) -> Any:
    """The field ``name`` of a record; missing or empty raises DatasetError with ``hint``."""
    value = record.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise DatasetError(f"{path}: {where} is missing field {name!r}; {hint}")
    return value


def string_list(path: Path, where: str, name: str, value: Any) -> tuple[str, ...]:
    """A list of strings given as a list or as a JSON-encoded list (PopQA's style)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise DatasetError(
                f"{path}: {where} field {name!r} is not a JSON list; write it as "
                '["answer", "alias", ...]'
            ) from None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DatasetError(f"{path}: {where} field {name!r} must be a list of strings")
    return tuple(dict.fromkeys(v.strip() for v in value if v.strip()))
