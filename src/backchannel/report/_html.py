"""The Report builder: sections of text, notes, tables, figures and metrics, written as one
self-contained HTML file (inline CSS, figures as base64 PNG) with each table's CSV beside it.
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
import re
import secrets
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from backchannel._safe_text import csv_frame, visible_controls
from backchannel._version import __version__
from backchannel.analysis import Interval
from backchannel.report._format import column_formatter, format_scalar, is_numeric_column
from backchannel.report._style import CSS

_TABLE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")


def _escape(text: object) -> str:
    """HTML-escaped, with bidi and control characters shown as `<U+XXXX>` (model text must not
    reverse or hide the page around it)."""
    return html.escape(visible_controls(str(text)), quote=True)


def _paragraphs(text: str, css_class: str | None = None) -> str:
    attribute = f' class="{css_class}"' if css_class else ""
    parts = [part.strip() for part in _PARAGRAPH_BREAK.split(text.strip())]
    return "".join(f"<p{attribute}>{_escape(part)}</p>" for part in parts if part)


def _slug(heading: str, taken: set[str]) -> str:
    base = re.sub(r"[^a-z0-9]+", "-", heading.lower()).strip("-") or "section"
    slug, counter = base, 2
    while slug in taken:
        slug, counter = f"{base}-{counter}", counter + 1
    taken.add(slug)
    return slug


def _display_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """Keep a meaningful index as ordinary columns so the HTML and the CSV show the same data."""
    if isinstance(frame.index, pd.RangeIndex) and frame.index.name is None:
        return frame
    return frame.reset_index()


def _figure_png(fig: Figure, dpi: int) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight", facecolor="white")
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:  # only pyplot tracks figures; a bare Figure is freed with its last ref
        pyplot.close(fig)
    return buffer.getvalue()


def _format_metric(name: str, value: object) -> str:
    if isinstance(value, Interval):
        if value.skipped is not None:
            known = not math.isnan(value.estimate)
            shown = f"{format_scalar(value.estimate, name)} " if known else ""
            return f"{shown}(no interval: {value.skipped}; n={value.n})"
        estimate = format_scalar(value.estimate, name)
        low, high = format_scalar(value.low, name), format_scalar(value.high, name)
        return f"{estimate} [{low}, {high}] (n={value.n})"
    return format_scalar(value, name)


@dataclass
class _Section:
    heading: str | None
    anchor: str | None
    blocks: list[str] = field(default_factory=list)


class Report:
    """A report page under construction; `write()` produces the HTML file and table CSVs."""

    def __init__(self, title: str, subtitle: str | None = None, *, max_rows: int = 200) -> None:
        if not title.strip():
            raise ValueError("a report needs a title")
        if max_rows < 1:
            raise ValueError("max_rows must be >= 1")
        self.title = title
        self.subtitle = subtitle
        self.max_rows = max_rows
        self._sections: list[_Section] = [_Section(None, None)]
        self._anchors: set[str] = set()
        self._tables: dict[str, pd.DataFrame] = {}
        self._banners: list[str] = []

    @property
    def table_names(self) -> list[str]:
        """Names of the tables added so far; each becomes `<name>.csv` on write."""
        return list(self._tables)

    def _current(self) -> _Section:
        return self._sections[-1]

    def section(self, heading: str, text: str | None = None) -> None:
        """Start a new section; `text` is plain text, paragraphs separated by blank lines."""
        if not heading.strip():
            raise ValueError("a section needs a heading")
        self._sections.append(_Section(heading, _slug(heading, self._anchors)))
        if text:
            self.text(text)

    def text(self, text: str) -> None:
        """Add plain-text paragraphs (separated by blank lines) to the current section."""
        self._current().blocks.append(_paragraphs(text))

    def banner(self, text: str) -> None:
        """A warning shown at the very top of the page, above the contents (e.g. a run that is
        still going or has incomplete conversations)."""
        self._banners.append(f'<div class="note banner" role="alert">{_paragraphs(text)}</div>')

    def note(self, text: str) -> None:
        """A highlighted paragraph for caveats the reader must not miss."""
        self._current().blocks.append(f'<div class="note">{_paragraphs(text)}</div>')

    def table(self, name: str, frame: pd.DataFrame, caption: str | None = None) -> None:
        """Show `frame` as an HTML table and write it as `<name>.csv` beside the report."""
        if not _TABLE_NAME.match(name):
            raise ValueError(f"table name {name!r} must be letters, digits, '_', '-', '.'")
        if name in self._tables:
            raise ValueError(f"a table named {name!r} was already added")
        shown = _display_frame(frame).copy()
        self._tables[name] = shown
        self._current().blocks.append(self._table_html(name, shown, caption))

    def _table_html(self, name: str, frame: pd.DataFrame, caption: str | None) -> str:
        columns = [str(c) for c in frame.columns]
        series = [frame.iloc[:, i] for i in range(frame.shape[1])]
        formatters = [column_formatter(c, s.tolist()) for c, s in zip(columns, series, strict=True)]
        numeric = [is_numeric_column(s.tolist()) for s in series]
        head = "".join(
            f"<th{' class=num' if is_num else ''}>{_escape(c)}</th>"
            for c, is_num in zip(columns, numeric, strict=True)
        )
        rows = []
        for row in frame.head(self.max_rows).itertuples(index=False, name=None):
            cells = "".join(
                f"<td{' class=num' if is_num else ''}>{_escape(fmt(value))}</td>"
                for value, fmt, is_num in zip(row, formatters, numeric, strict=True)
            )
            rows.append(f"<tr>{cells}</tr>")
        caption_html = f"<caption>{_escape(caption)}</caption>" if caption else ""
        shown = min(len(frame), self.max_rows)
        count = f"{len(frame)} rows" if shown == len(frame) else f"first {shown} of {len(frame)}"
        source = (
            f'<p class="source">{_escape(count)} · full table: '
            f'<a href="{_escape(name)}.csv">{_escape(name)}.csv</a></p>'
        )
        return (
            f'<div class="table-wrap"><table>{caption_html}<thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table>{source}</div>"
        )

    def figure(self, fig: Figure, caption: str, *, dpi: int = 110) -> None:
        """Embed `fig` as a base64 PNG (the HTML stays self-contained) and close it."""
        encoded = base64.b64encode(_figure_png(fig, dpi)).decode("ascii")
        self._current().blocks.append(
            f'<figure><img src="data:image/png;base64,{encoded}" alt="{_escape(caption)}">'
            f"<figcaption>{_escape(caption)}</figcaption></figure>"
        )

    def metrics(self, values: Mapping[str, object]) -> None:
        """A small key/value table; an `Interval` shows as `estimate [low, high] (n=...)`."""
        rows = "".join(
            f"<tr><th>{_escape(key)}</th>"
            f"<td class=num>{_escape(_format_metric(key, value))}</td></tr>"
            for key, value in values.items()
        )
        self._current().blocks.append(f'<table class="metrics"><tbody>{rows}</tbody></table>')

    def to_html(self) -> str:
        """The whole page as one HTML string."""
        subtitle = f'<p class="subtitle">{_escape(self.subtitle)}</p>' if self.subtitle else ""
        named = [s for s in self._sections if s.heading is not None]
        contents = ""
        if len(named) > 1:
            links = "".join(
                f'<li><a href="#{s.anchor}">{_escape(s.heading)}</a></li>' for s in named
            )
            contents = f"<nav><h2>Contents</h2><ol>{links}</ol></nav>"
        body = "".join(self._section_html(s) for s in self._sections)
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_escape(self.title)}</title><style>{CSS}</style></head>"
            f"<body><main><header><h1>{_escape(self.title)}</h1>{subtitle}</header>"
            f"{''.join(self._banners)}{contents}{body}</main>"
            f"<footer>backchannel {_escape(__version__)}</footer></body></html>\n"
        )

    @staticmethod
    def _section_html(section: _Section) -> str:
        if section.heading is None:
            return "".join(section.blocks)
        return (
            f'<section id="{section.anchor}"><h2>{_escape(section.heading)}</h2>'
            f"{''.join(section.blocks)}</section>"
        )

    def write(self, directory: Path, filename: str = "report.html") -> Path:
        """Write the HTML and one CSV per table into `directory`; returns the HTML path.

        Everything is written into a staging folder first. A new folder, or one holding only
        an earlier report, is then replaced by a rename, so a killed write leaves the old
        report or the new one, never a mix. In a folder holding other files too, each file is
        moved into place on its own (the HTML last), so none is ever half-written.
        """
        if Path(filename).name != filename or not filename.endswith(".html"):
            raise ValueError(f"filename must be a bare '*.html' name, got {filename!r}")
        directory = Path(directory)
        parent = directory.resolve().parent
        parent.mkdir(parents=True, exist_ok=True)
        prefix = f".{directory.name}.report-"
        for stale in parent.glob(f"{glob_escape(prefix)}*"):
            shutil.rmtree(stale, ignore_errors=True)
        staging = _fresh_folder(parent, prefix)
        try:
            for name, frame in self._tables.items():
                csv_frame(frame).to_csv(staging / f"{name}.csv", index=False)
            (staging / filename).write_text(self.to_html(), encoding="utf-8")
            _move_into_place(staging, directory.resolve(), filename)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return directory / filename


def glob_escape(text: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", text)


def _fresh_folder(parent: Path, prefix: str) -> Path:
    """A new folder named `prefix` + random hex, created with the user's usual permissions."""
    while True:
        folder = parent / f"{prefix}{secrets.token_hex(4)}"
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue


def _is_report_folder(directory: Path) -> bool:
    """Whether `directory` holds nothing but what a report writes (HTML and CSV files)."""
    return all(
        entry.is_file() and entry.suffix in (".html", ".csv") for entry in directory.iterdir()
    )


def _move_into_place(staging: Path, directory: Path, filename: str) -> None:
    if not directory.exists():
        os.rename(staging, directory)
        staging.mkdir()  # the caller removes it
        return
    if not directory.is_dir():
        raise NotADirectoryError(f"{directory} is a file")
    if _is_report_folder(directory):
        old = _fresh_folder(directory.parent, f".{directory.name}.report-")
        os.rename(directory, old / "previous")
        os.rename(staging, directory)
        staging.mkdir()
        shutil.rmtree(old, ignore_errors=True)
        return
    names = sorted(p.name for p in staging.iterdir() if p.name != filename)
    for name in [*names, filename]:
        os.replace(staging / name, directory / name)
