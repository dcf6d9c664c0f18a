"""`backchannel metrics RUN` without --json: the headline first, then one tidy table per section.

A section's list of records is one table (cell factors and measures as columns); an interval
{estimate, low, high, n, ...} is one cell `est [low, high] n=N`, and other nested values become
dotted columns. Tables wider than the terminal are split into column groups that repeat the
row keys, so nothing is cut off. Without `--all`, long sections show their first rows and say
how to see the rest.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

_INTERVAL = {"estimate", "low", "high"}
PREVIEW_ROWS = 12
"""Rows a section shows without --all."""


def _is_scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def _is_interval(value: Any) -> bool:
    """{estimate, low, high} with other scalar fields (n, k, skipped, ...) beside them."""
    return (
        isinstance(value, Mapping)
        and set(value) >= _INTERVAL
        and all(_is_scalar(v) for v in value.values())
    )


def cell(value: Any) -> str:
    """One value as table text: numbers to four significant digits, null as a dash."""
    if _is_interval(value):
        if value.get("estimate") is None and value.get("skipped"):
            return f"- ({value['skipped']})"
        text = f"{cell(value['estimate'])} [{cell(value['low'])}, {cell(value['high'])}]"
        return text + (f" n={value['n']}" if value.get("n") is not None else "")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "0" if abs(value) < 1e-12 else f"{value:.4g}"
    if isinstance(value, list) and all(_is_scalar(v) for v in value):
        return ", ".join(cell(v) for v in value)
    return str(value)


def flatten(record: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A record with nested mappings as dotted keys; intervals (also as `x`, `x_low`,
    `x_high`, `x_n` columns) kept whole, so each reads as one cell."""
    flat: dict[str, Any] = {}
    for key, value in record.items():
        name = f"{prefix}{key}"
        if key.endswith(("_low", "_high", "_n", "_skipped")) and key.rsplit("_", 1)[0] in record:
            continue
        if f"{key}_low" in record and f"{key}_high" in record:
            interval = {"estimate": value, "low": record[f"{key}_low"]}
            interval["high"] = record[f"{key}_high"]
            for extra in ("n", "skipped"):
                if f"{key}_{extra}" in record:
                    interval[extra] = record[f"{key}_{extra}"]
            flat[name] = interval
        elif isinstance(value, Mapping) and not _is_interval(value):
            flat.update(flatten(value, f"{name}."))
        else:
            flat[name] = value
    return flat


@dataclass
class Section:
    """One printable table: a title, row keys (repeated in every column group), rows."""

    title: str
    keys: list[str]
    columns: list[str]
    rows: list[dict[str, Any]]
    hidden: int = 0
    notes: list[str] = field(default_factory=list)


def sections(metrics: Mapping[str, Any], path: str = "") -> Iterator[Section]:
    """The tables of a metrics mapping, depth first: its scalars as one name/value table, each
    list of records as one table, nested mappings recursively."""
    flat = {k: v for k, v in metrics.items() if _is_scalar(v) or _is_interval(v)}
    flat |= {k: v for k, v in metrics.items() if isinstance(v, list) and all(map(_is_scalar, v))}
    if flat:
        rows = [{"name": str(k), "value": v} for k, v in flat.items()]
        yield Section(path or "summary", ["name"], ["value"], rows)
    for key, value in metrics.items():
        if key in flat:
            continue
        name = f"{path}.{key}" if path else str(key)
        if isinstance(value, list) and value and all(isinstance(r, Mapping) for r in value):
            records = [flatten(r) for r in value]
            columns = list(dict.fromkeys(c for record in records for c in record))
            keys = _row_keys(records, columns)
            yield Section(name, keys, [c for c in columns if c not in keys], records)
        elif isinstance(value, Mapping):
            yield from sections(value, name)
        elif isinstance(value, list):
            rows = [{"index": i, "value": v} for i, v in enumerate(value)]
            yield Section(name, ["index"], ["value"], rows)


KEY_NAMES = frozenset({"k", "checkpoint", "round", "bin", "phase", "n_agents", "replicate"})
"""Numeric columns that still identify a row rather than measure it."""


def _row_keys(records: Sequence[Mapping[str, Any]], columns: list[str]) -> list[str]:
    """The leading columns that identify a row: factor levels, names, checkpoints."""
    keys: list[str] = []
    for column in columns[:6]:
        values = [r.get(column) for r in records]
        if column in KEY_NAMES or all(isinstance(v, str) or v is None for v in values):
            keys.append(column)
        else:
            break
    return keys


def condensed(section: Section) -> Section:
    """The section without key columns that hold one level in every row (said in a note),
    and with a long prefix shared by every value of a key column left out (also said)."""
    if len(section.rows) < 2:
        return section
    notes = list(section.notes)
    constant = [k for k in section.keys if len({cell(r.get(k)) for r in section.rows}) == 1]
    if constant:
        first = section.rows[0]
        notes.insert(0, "every row: " + ", ".join(f"{c}={cell(first.get(c))}" for c in constant))
    keys = [k for k in section.keys if k not in constant]
    rows = [dict(r) for r in section.rows]
    for key in keys:
        values = [r.get(key) for r in rows]
        if not all(isinstance(v, str) for v in values):
            continue
        prefix = _shared_prefix([str(v) for v in values])
        if len(prefix) >= 8:
            for row in rows:
                row[key] = "…" + str(row[key])[len(prefix) :]
            notes.insert(0, f"{key}: every value starts with {prefix!r} (shown as …)")
    columns = [c for c in section.columns if c not in constant]
    return Section(section.title, keys, columns, rows, section.hidden, notes)


def _shared_prefix(values: list[str]) -> str:
    """The longest prefix of every value that ends at a separator and leaves each non-empty."""
    first = min(values, key=len) if values else ""
    length = 0
    for index, char in enumerate(first):
        if any(v[index] != char for v in values):
            break
        if char in "/#:-_." and index + 1 < min(len(v) for v in values):
            length = index + 1
    return first[:length]


def long_form(section: Section) -> Section:
    """One row per (row keys, column): a table that fits any width."""
    name = "column" if "measure" in section.keys else "measure"
    rows = [
        {**{k: r.get(k) for k in section.keys}, name: c, "value": r.get(c)}
        for r in section.rows
        for c in section.columns
        if c in r
    ]
    return Section(section.title, [*section.keys, name], ["value"], rows, 0, section.notes)


def _width(texts: Sequence[str]) -> int:
    return max((len(t) for t in texts), default=1)


def _needed(section: Section, column: str) -> int:
    """Characters a column takes: its widest cell or (up to 24) its header, and borders."""
    return max(_width([cell(r.get(column)) for r in section.rows]), min(len(column), 24)) + 3


def fits(section: Section, width: int) -> bool:
    """Whether the whole section fits `width` as one table."""
    return sum(_needed(section, c) for c in [*section.keys, *section.columns]) + 4 <= width


def column_groups(section: Section, width: int) -> list[list[str]]:
    """The section's columns split so that each group, with the row keys, fits `width`."""

    def needed(column: str) -> int:
        return _needed(section, column)

    base = sum(needed(k) for k in section.keys) + 4
    groups: list[list[str]] = [[]]
    used = base
    for column in section.columns:
        size = needed(column)
        if groups[-1] and used + size > width:
            groups.append([])
            used = base
        groups[-1].append(column)
        used += size
    return [g for g in groups if g] or [[]]


MAX_GROUPS = 3
"""Beyond this many column groups, a section is printed in long form instead."""


def render(console: Console, section: Section) -> None:
    """Print one section as one or more tables that fit the console."""
    section = condensed(section)
    groups = column_groups(section, console.width)
    if len(groups) > MAX_GROUPS:
        hidden = section.hidden
        section = long_form(section)
        section.hidden = hidden
        groups = column_groups(section, console.width)
    if len(section.keys) > 1 and (len(groups) > 1 or not fits(section, console.width)):
        render_records(console, section)
        return
    for index, group in enumerate(groups):
        part = f" ({index + 1} of {len(groups)})" if len(groups) > 1 else ""
        title = section.title + part
        table = Table(title=title, title_justify="left", min_width=min(len(title), console.width))
        for key in section.keys:
            table.add_column(key, no_wrap=True, style="bold")
        for column in group:
            table.add_column(column, overflow="fold")
        for row in section.rows:
            table.add_row(*(cell(row.get(c)) for c in [*section.keys, *group]))
        console.print(table)
    if section.hidden:
        console.print(
            f"  ({section.hidden} more rows: --section {section.title.split('.')[0]} or --all)"
        )
    for note in section.notes:
        if note:
            console.print(f"  {note}", markup=False, soft_wrap=True)


def render_records(console: Console, section: Section) -> None:
    """Rows too wide for any table: each as a heading of its keys, then `column: value` lines
    (the layout that fits every width)."""
    console.print(section.title, style="bold", markup=False)
    keys = [k for k in section.keys if k not in ("measure", "column")]
    inner = [k for k in section.keys if k not in keys]
    previous: tuple[str, ...] | None = None
    for row in section.rows:
        heading = tuple(cell(row.get(k)) for k in keys)
        if heading != previous:
            console.print(
                "  " + ", ".join(f"{k}={v}" for k, v in zip(keys, heading, strict=True)),
                markup=False,
                soft_wrap=True,
            )
            previous = heading
        label = " ".join(cell(row.get(k)) for k in inner)
        values = "; ".join(
            f"{c} {cell(row.get(c))}" if len(section.columns) > 1 else cell(row.get(c))
            for c in section.columns
        )
        console.print(f"    {label}: {values}", markup=False, soft_wrap=True)
    if section.hidden:
        console.print(
            f"  ({section.hidden} more rows: --section {section.title.split('.')[0]} or --all)"
        )
    for note in section.notes:
        if note:
            console.print(f"  {note}", markup=False, soft_wrap=True)


def headline_section(headline: Any) -> Section:
    """A typed `Headline` in its study's layout."""
    frame = headline.pivot()
    rows = frame.to_dict(orient="records")
    keys = [c for c in headline.index if c in frame.columns]
    notes = [headline.note] if headline.note else []
    return Section(
        headline.title, keys, [c for c in frame.columns if c not in keys], rows, 0, notes
    )


def print_metrics(
    console: Console,
    data: Mapping[str, Any],
    caveat: str | None,
    *,
    headline: Any = None,
    comparison: Any = None,
    only: str | None = None,
    everything: bool = False,
) -> None:
    """The caveat, the headline, then every section (or the one `only` names); long sections
    are shortened unless `everything`."""
    if caveat:
        console.print(f"[yellow]note:[/] {caveat}")
    if headline is not None and only is None:
        render(console, headline_section(headline))
    if comparison is not None:
        render(console, comparison)
    if comparison is not None and only is None and not everything:
        return
    for section in sections(data):
        if only is not None and section.title.split(".")[0] != only:
            continue
        if not everything and only is None and len(section.rows) > PREVIEW_ROWS:
            section.hidden = len(section.rows) - PREVIEW_ROWS
            section.rows = section.rows[:PREVIEW_ROWS]
        render(console, section)


def section_names(data: Mapping[str, Any]) -> list[str]:
    """The top-level section names `--section` accepts."""
    return [str(k) for k in data]
