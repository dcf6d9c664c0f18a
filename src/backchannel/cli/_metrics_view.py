"""`backchannel metrics RUN` without --json: the metrics mapping as readable rich tables.

Lists of records become tables with one column per field; the scalars of a mapping become one
name/value table per section; an interval {estimate, low, high, n} reads `est [low, high] n=N`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from rich.console import Console
from rich.table import Table

_INTERVAL = {"estimate", "low", "high"}


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _is_interval(value: Any) -> bool:
    return (
        isinstance(value, Mapping) and set(value) >= _INTERVAL and set(value) <= {*_INTERVAL, "n"}
    )


def cell(value: Any) -> str:
    """One value as table text: numbers to four significant digits, null as a dash."""
    if _is_interval(value):
        text = f"{cell(value['estimate'])} [{cell(value['low'])}, {cell(value['high'])}]"
        return text + (f" n={value['n']}" if "n" in value else "")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list) and all(_is_scalar(v) for v in value):
        return ", ".join(cell(v) for v in value)
    return str(value)


def _is_records(value: Any) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(r, Mapping) for r in value)
        and all(_is_scalar(v) or _is_interval(v) for r in value for v in r.values())
    )


def _merge_intervals(record: Mapping[str, Any]) -> dict[str, Any]:
    """`x`, `x_low`, `x_high` (and `x_n`) columns as one interval column `x`."""
    merged: dict[str, Any] = {}
    for key, value in record.items():
        if key.endswith(("_low", "_high", "_n")) and key.rsplit("_", 1)[0] in record:
            continue
        if f"{key}_low" in record and f"{key}_high" in record:
            interval = {"estimate": value, "low": record[f"{key}_low"]}
            interval["high"] = record[f"{key}_high"]
            if f"{key}_n" in record:
                interval["n"] = record[f"{key}_n"]
            merged[key] = interval
        else:
            merged[key] = value
    return merged


def tables(metrics: Mapping[str, Any], path: str = "") -> Iterator[Table]:
    """The tables of one mapping, depth first, each titled by its dotted path."""
    flat = {
        k: v
        for k, v in metrics.items()
        if _is_scalar(v) or _is_interval(v) or (isinstance(v, list) and all(map(_is_scalar, v)))
    }
    if flat:
        table = Table(
            title=path or "summary", title_justify="left", show_header=False, min_width=30
        )
        table.add_column("name", style="bold")
        table.add_column("value")
        for key, value in flat.items():
            table.add_row(str(key), cell(value))
        yield table
    for key, value in metrics.items():
        if key in flat:
            continue
        name = f"{path}.{key}" if path else str(key)
        if _is_records(value):
            records = [_merge_intervals(r) for r in value]
            columns = list(dict.fromkeys(c for record in records for c in record))
            table = Table(title=name, title_justify="left")
            for column in columns:
                table.add_column(str(column), overflow="fold")
            for record in records:
                table.add_row(*(cell(record.get(c)) for c in columns))
            yield table
        elif isinstance(value, Mapping):
            yield from tables(value, name)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, Mapping):
                    yield from tables(item, f"{name}.{index}")
                else:
                    yield from tables({"value": item}, f"{name}.{index}")


def print_tables(console: Console, metrics: Mapping[str, Any], caveat: str | None) -> None:
    """Print the caveat (simulated or too-small models) first, then every table."""
    if caveat:
        console.print(f"[yellow]note:[/] {caveat}")
    for table in tables(metrics):
        console.print(table)
