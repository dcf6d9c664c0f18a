"""The Report builder: sections of text, notes, tables, figures and metrics, written as one
self-contained HTML file (inline CSS, figures as inline SVG) with each table's CSV beside it,
and each figure as SVG and PDF at column width with its data as CSV.

Tables fit the page: a table wider than the page is split into parts that repeat its key
columns, long texts are clamped to three lines (the full text on hover and in the CSV). With
`link_to_viewer`, every table row, headline value and figure point links to the viewer's list
of the conversations behind it.
"""

from __future__ import annotations

import html
import io
import json
import math
import os
import re
import secrets
import shutil
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from matplotlib.figure import Figure

from backchannel._safe_text import csv_frame, visible_controls
from backchannel._version import __version__
from backchannel.analysis import Interval
from backchannel.report._figures import ROW_URL, figure_data
from backchannel.report._format import column_formatter, format_scalar, is_numeric_column
from backchannel.report._links import ViewerLinks
from backchannel.report._style import CSS

if TYPE_CHECKING:
    from backchannel.analysis import Headline

TEXT_WIDTH_IN = 7.0
"""A page's text column (178 mm, both columns of a two-column journal page): figures drawn
wider are laid out again at this width, for the page and for the SVG and PDF."""
PAGE_BUDGET_PX = 1000
"""What a table may take of the page's 1,104 px of text width (72rem less padding), as its
width is estimated here; the rest is slack for the estimate."""
LONG_TEXT = 36
"""Texts longer than this wrap, at most three lines (the rest on hover and in the CSV)."""
_CHAR_PX = 8.0
_CELL_PAD_PX = 22.0
_LONG_PX = 288.0  # 18rem, the clamped column

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


def _save(fig: Figure, fmt: str) -> bytes:
    import matplotlib

    buffer = io.BytesIO()
    # Text as paths: a label holding model text is drawn, never parsed as markup.
    with matplotlib.rc_context({"svg.fonttype": "path", "svg.hashsalt": None}):
        fig.savefig(buffer, format=fmt, facecolor="white")
    return buffer.getvalue()


def _close(fig: Figure) -> None:
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:  # only pyplot tracks figures; a bare Figure is freed with its last ref
        pyplot.close(fig)


_ROW_HREF = re.compile(r'xlink:href="' + re.escape(ROW_URL) + r'(\d+)"')
_SVG_START = re.compile(r"<svg\b")


def _inline_svg(svg: bytes, url: Callable[[int], str | None]) -> str:
    """The figure's SVG as an element of the page, each point's placeholder link resolved (or
    dropped); the XML prologue and doctype go, the `<svg>` element stays as matplotlib drew it."""
    text = svg.decode("utf-8")
    start = _SVG_START.search(text)
    text = text[start.start() :] if start is not None else text

    def resolve(match: re.Match[str]) -> str:
        target = url(int(match.group(1)))
        return f'xlink:href="{html.escape(target, quote=True)}"' if target else ""

    return _SVG_SIZE.sub(_screen_size, _ROW_HREF.sub(resolve, text), count=1)


_SVG_SIZE = re.compile(r'<svg([^>]*?) width="([\d.]+)pt" height="([\d.]+)pt"')
SCREEN_DPI = 110
"""Pixels per inch of a figure on the page (as the figures were sized for): 7 in is 770 px."""


def _screen_size(match: re.Match[str]) -> str:
    """The page shows the figure at `SCREEN_DPI` (its viewBox keeps it sharp at any size)."""
    width, height = (round(float(match.group(i)) / 72 * SCREEN_DPI) for i in (2, 3))
    return f'<svg{match.group(1)} width="{width}px" height="{height}px"'


def _plain_svg(svg: bytes) -> bytes:
    """The downloadable SVG: without the page's links."""
    return _ROW_HREF.sub("", svg.decode("utf-8")).encode("utf-8")


def _text_px(text: str) -> float:
    return len(text) * _CHAR_PX + _CELL_PAD_PX


def _header_px(text: str) -> float:
    """The header's width when it breaks (at `_` and spaces) into at most two lines."""
    breaks = [i + 1 for i, c in enumerate(text) if c in "_ "]
    best = len(text)
    for at in breaks:
        best = min(best, max(at, len(text) - at))
    return best * _CHAR_PX * 1.08 + _CELL_PAD_PX


def _cell_px(text: str) -> float:
    return min(_text_px(text), _LONG_PX + _CELL_PAD_PX) if len(text) > LONG_TEXT else _text_px(text)


def _parts(
    widths: Sequence[float], keys: int, budget: float, groups: Sequence[Sequence[int]] = ()
) -> list[list[int]]:
    """Column positions of each part of a table: the first `keys` columns in every part, the
    others in order, as many as fit within `budget`; a group of columns (one measure across
    levels) stays in one part where it fits in one."""
    head = list(range(keys))
    base = sum(widths[:keys])
    grouped = {i for group in groups for i in group}
    units = [list(g) for g in groups] + [[i] for i in range(keys, len(widths)) if i not in grouped]
    units.sort(key=lambda unit: unit[0])
    parts: list[list[int]] = []
    current: list[int] = []
    used = base
    for unit in units:
        size = sum(widths[i] for i in unit)
        if current and used + size > budget:
            parts.append(head + current)
            current, used = [], base
        for position in unit:  # a unit wider than a whole part breaks where it must
            if current and used + widths[position] > budget:
                parts.append(head + current)
                current, used = [], base
            current.append(position)
            used += widths[position]
    if current or not parts:
        parts.append(head + current)
    return parts


def _header_html(text: str, numeric: bool) -> str:
    shown = _escape(text).replace("_", "_<wbr>")
    return f"<th{' class=num' if numeric else ''}>{shown}</th>"


def _cell_html(text: str, numeric: bool, url: str | None) -> str:
    shown = _escape(text)
    if url is not None:
        shown = f'<a class="conversations" href="{_escape(url)}">{shown}</a>'
    if len(text) > LONG_TEXT:
        return f'<td class="long"><div title="{_escape(text)}">{shown}</div></td>'
    return f"<td{' class=num' if numeric else ''}>{shown}</td>"


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


@dataclass(frozen=True)
class _FigureFiles:
    files: dict[str, bytes]
    data: pd.DataFrame | None


@dataclass
class _Section:
    heading: str | None
    anchor: str | None
    blocks: list[str | Callable[[], str]] = field(default_factory=list)
    """HTML, or a function giving it when the page is written (the headline, whose links use
    what the paradigm's sections say later about their columns)."""


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
        self._figures: dict[str, _FigureFiles] = {}
        self._banners: list[str] = []
        self._links: ViewerLinks | None = None

    def link_to_viewer(self, links: ViewerLinks | None) -> None:
        """Link the tables, headline and figure points added from now on to the viewer."""
        self._links = links

    def derive_levels(self, column: str, levels: Mapping[str, Mapping[str, Any]]) -> None:
        """Say that `column` (in the tables, headline and figure data added from now on)
        stands for factor levels: value (as text) -> levels, e.g. dyad's `pairing`. Without
        it a row keyed by such a column has no link; with viewer links off, nothing."""
        if self._links is not None:
            self._links = self._links.with_derived(column, levels)

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

    def headline(self, headline: Headline, caption: str | None = None) -> None:
        """The headline table in the study's layout (`headline.csv` beside the report); with
        viewer links, each estimate links to its cell's conversations. Its links are made when
        the page is written, so columns a paradigm's sections later say stand for factor levels
        (`derive_levels`, e.g. dyad's pairing) link here too."""
        frame = headline.pivot()
        shown = self._keep_table("headline", frame)
        self._current().blocks.append(lambda: self._headline_html(headline, frame, shown, caption))

    def _headline_html(
        self, headline: Headline, frame: pd.DataFrame, shown: pd.DataFrame, caption: str | None
    ) -> str:
        links = self._links
        urls: dict[tuple[str, str], str] = {}
        if links is not None:
            constant = {
                k
                for k in {k for v in headline.rows for k in v.cell}
                if len({json.dumps(v.cell.get(k), default=str) for v in headline.rows}) == 1
            }
            for value in headline.rows:
                # A key the viewer cannot filter by must not tell the rows apart: one level in
                # the whole headline, or spread across columns (the same conversations
                # measured again: a checkpoint, council's state C re-tallying B).
                unknown = [k for k in value.cell if not links.knows(k)]
                if any(k not in headline.columns and k not in constant for k in unknown):
                    continue
                target = links.cell_url(value.cell)
                if target is not None:
                    row = tuple(str(value.cell.get(k)) for k in headline.index)
                    urls[(repr(row), headline.label(value))] = target

        def url(position: int, column: str) -> str | None:
            key = tuple(str(frame.iloc[position][k]) for k in headline.index)
            return urls.get((repr(key), column))

        measures = {headline.label(value): value.measure for value in headline.rows}
        columns = [str(c) for c in frame.columns]
        groups: dict[str, list[int]] = {}
        for position, column in enumerate(columns):
            if column in measures:
                groups.setdefault(measures[column], []).append(position)
        return self._table_html(
            "headline", shown, caption, url, keys=len(headline.index), groups=list(groups.values())
        )

    def table(self, name: str, frame: pd.DataFrame, caption: str | None = None) -> None:
        """Show `frame` as an HTML table and write it as `<name>.csv` beside the report; with
        viewer links, a row with factor columns links (from its first cell) to its cell's
        conversations."""
        shown = _display_frame(frame).copy()
        columns = [str(c) for c in shown.columns]
        links = self._links

        def url(position: int, column: str) -> str | None:
            if links is None or column != columns[0]:
                return None
            return links.row_url(columns, list(shown.iloc[position]))

        self._add_table(name, shown, caption, url)

    def _add_table(
        self,
        name: str,
        frame: pd.DataFrame,
        caption: str | None,
        url: Callable[[int, str], str | None],
        *,
        keys: int | None = None,
        groups: Sequence[Sequence[int]] = (),
    ) -> None:
        shown = self._keep_table(name, frame)
        self._current().blocks.append(
            self._table_html(name, shown, caption, url, keys=keys, groups=groups)
        )

    def _keep_table(self, name: str, frame: pd.DataFrame) -> pd.DataFrame:
        """Check `name` and keep the table shown under it (written as `<name>.csv`)."""
        if not _TABLE_NAME.match(name):
            raise ValueError(f"table name {name!r} must be letters, digits, '_', '-', '.'")
        if name in self._tables or name in self._figures:
            raise ValueError(f"a table named {name!r} was already added")
        shown = _display_frame(frame).copy()
        self._tables[name] = shown
        return shown

    def _key_count(
        self, columns: Sequence[str], numeric: Sequence[bool], widths: Sequence[float]
    ) -> int:
        """How many leading columns identify a row (the run's factors, else short text such as
        a pairing's name), repeated in every part of a split table: at most four, and at most
        half the page."""
        factors = self._links.factors if self._links is not None else ()
        count, used = 0, 0.0
        for column, is_num, width in zip(columns, numeric, widths, strict=True):
            if column not in factors and (is_num or width > _LONG_PX):
                break
            if count == 4 or used + width > PAGE_BUDGET_PX / 2:
                break
            count, used = count + 1, used + width
        return max(1, count)

    def _table_html(
        self,
        name: str,
        frame: pd.DataFrame,
        caption: str | None,
        url: Callable[[int, str], str | None],
        *,
        keys: int | None = None,
        groups: Sequence[Sequence[int]] = (),
    ) -> str:
        columns = [str(c) for c in frame.columns]
        series = [frame.iloc[:, i] for i in range(frame.shape[1])]
        formatters = [column_formatter(c, s.tolist()) for c, s in zip(columns, series, strict=True)]
        numeric = [is_numeric_column(s.tolist()) for s in series]
        body = [
            [fmt(value) for value, fmt in zip(row, formatters, strict=True)]
            for row in frame.head(self.max_rows).itertuples(index=False, name=None)
        ]
        widths = [
            max([_header_px(column), *(_cell_px(row[i]) for row in body)])
            for i, column in enumerate(columns)
        ]
        if keys is None:
            keys = self._key_count(columns, numeric, widths) if columns else 0
        parts = _parts(widths, keys, PAGE_BUDGET_PX, groups) if columns else [[]]
        tables = []
        for number, part in enumerate(parts, start=1):
            head = "".join(_header_html(columns[i], numeric[i]) for i in part)
            rows = []
            for position, texts in enumerate(body):
                cells = "".join(
                    _cell_html(texts[i], numeric[i], url(position, columns[i])) for i in part
                )
                rows.append(f"<tr>{cells}</tr>")
            label = caption or ""
            if len(parts) > 1:
                label = f"{label} (part {number} of {len(parts)})".strip()
            caption_html = f"<caption>{_escape(label)}</caption>" if label else ""
            tables.append(
                f"<table>{caption_html}<thead><tr>{head}</tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>"
            )
        shown = min(len(frame), self.max_rows)
        count = f"{len(frame)} rows" if shown == len(frame) else f"first {shown} of {len(frame)}"
        source = (
            f'<p class="source">{_escape(count)} · full table: '
            f'<a href="{_escape(name)}.csv">{_escape(name)}.csv</a></p>'
        )
        return f'<div class="table-wrap">{"".join(tables)}{source}</div>'

    def figure(
        self,
        fig: Figure,
        caption: str,
        *,
        name: str | None = None,
        data: pd.DataFrame | None = None,
    ) -> None:
        """Embed `fig` as inline SVG and close it; `<name>.svg` and `<name>.pdf` (at most the
        text column's 7 in) and its data as `<name>.csv` are written beside the report.
        `data` defaults to the frame a figure helper drew; its rows' factor levels are the
        points' viewer links."""
        name = name or f"figure-{len(self._figures) + 1}"
        if not _TABLE_NAME.match(name):
            raise ValueError(f"figure name {name!r} must be letters, digits, '_', '-', '.'")
        if name in self._figures or name in self._tables:
            raise ValueError(f"a figure or table named {name!r} was already added")
        frame = data if data is not None else figure_data(fig)
        links = self._links

        def url(position: int) -> str | None:
            if links is None or frame is None or not 0 <= position < len(frame):
                return None
            columns = [str(c) for c in frame.columns]
            return links.row_url(columns, list(frame.iloc[position]))

        width, height = fig.get_size_inches()
        if width > TEXT_WIDTH_IN:  # laid out again at the page's width, not shrunk
            fig.set_size_inches(TEXT_WIDTH_IN, height * TEXT_WIDTH_IN / width)
        drawn = _save(fig, "svg")
        files = {"svg": _plain_svg(drawn), "pdf": _save(fig, "pdf")}
        _close(fig)
        svg = _inline_svg(drawn, url)
        self._figures[name] = _FigureFiles(files, None if frame is None else frame.copy())
        downloads = " · ".join(
            f'<a href="{_escape(name)}.{ext}" download>{ext.upper()}</a>'
            for ext in ("svg", "pdf", *(("csv",) if frame is not None else ()))
        )
        self._current().blocks.append(
            f'<figure><div class="plot" id="{_escape(name)}" role="img" '
            f'aria-label="{_escape(caption)}">{svg}</div>'
            f"<figcaption>{_escape(caption)} "
            f'<span class="downloads">{downloads}</span></figcaption></figure>'
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
        blocks = "".join(block if isinstance(block, str) else block() for block in section.blocks)
        if section.heading is None:
            return blocks
        return (
            f'<section id="{section.anchor}"><h2>{_escape(section.heading)}</h2>{blocks}</section>'
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
            for name, figure in self._figures.items():
                for ext, content in figure.files.items():
                    (staging / f"{name}.{ext}").write_bytes(content)
                if figure.data is not None:
                    csv_frame(figure.data).to_csv(staging / f"{name}.csv", index=False)
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
    """Whether `directory` holds nothing but what a report writes (HTML, CSV, SVG, PDF)."""
    return all(
        entry.is_file() and entry.suffix in (".html", ".csv", ".svg", ".pdf")
        for entry in directory.iterdir()
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
