"""A paradigm's view: the data the transcript viewer draws for its runs, with no drawing code.

A paradigm sets `view = View(...)` (see `docs/viewer.md`). The viewer calls `rows` on the tables
of a page of conversations (its figures in the conversations table and the filters of the URL)
and `page` on the tables of one conversation (the panels of its page), both with the same
functions as the paradigm's metrics. Everything here is plain data: tables whose cells hold event
references, chips and text, layered graphs, line plots and event lists. The viewer's one
renderer draws them with DOM calls, so a paradigm's page needs no script of its own.

This module imports no web server and no pandas, so a plugin can import it anywhere.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis import RunTables

Scalar: TypeAlias = "str | int | float | bool | None"
Tone = Literal["", "positive", "negative", "warning", "info", "accent", "muted", "highlight"]
"""A colour of the viewer's palette: green, red, amber, blue, purple, grey, yellow (always paired
with a text, so nothing rests on colour alone)."""
TONES = ("", "positive", "negative", "warning", "info", "accent", "muted", "highlight")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")
_CLASS = re.compile(r"^[A-Za-z0-9_ -]*$")


def _check_tone(tone: str) -> None:
    if tone not in TONES:
        raise ValueError(
            f"unknown tone {tone!r}; use one of {', '.join(t or '(none)' for t in TONES)}"
        )


def _check_class(name: str) -> None:
    if not _CLASS.match(name):
        raise ValueError(f"class {name!r} may hold only letters, digits, '-', '_' and spaces")


@dataclass(frozen=True, slots=True)
class Column:
    """One per-conversation figure: a column of the conversations table (when `shown`) and a key
    the URL may filter by (`m.KEY=VALUE`)."""

    key: str
    title: str
    help: str = ""
    shown: bool = True
    """False: filterable and shown on the conversation's page, but not a table column."""

    def __post_init__(self) -> None:
        if not _NAME.match(self.key):
            raise ValueError(f"column key {self.key!r} must be a name (letters, digits, _ . -)")


@dataclass(frozen=True, slots=True)
class Chip:
    """A short label (a judge's label, a role, a status), optionally coloured."""

    label: str
    tone: Tone = ""
    kind: str = ""
    """What the label is (belief, stance, status, role, ...): shown as its class `chip-KIND`."""

    def __post_init__(self) -> None:
        _check_tone(self.tone)
        _check_class(self.kind)


@dataclass(frozen=True, slots=True)
class Text:
    """Text shown as it is (model text is always text on the page, never markup)."""

    text: str
    strong: bool = False


@dataclass(frozen=True, slots=True)
class EventRef:
    """One event of the conversation: a button that opens its prompt and answer.

    It shows `parts` and then the event's own text (unless `body` is False). The agent filter
    leaves it out (with its parts) when the chosen agent did not see the event.
    """

    seq: int
    parts: tuple[Part, ...] = ()
    body: bool = True


Part: TypeAlias = "str | Chip | Text | EventRef"


@dataclass(frozen=True, slots=True)
class Cell:
    """One table cell. `tone` and `flag` (a short text) mark it; both are drawn only while the
    viewer shows every event of `requires` (a mark that rests on a private answer vanishes with
    it under the agent filter)."""

    parts: tuple[Part, ...] = ()
    tone: Tone = ""
    flag: str | None = None
    requires: tuple[int, ...] = ()
    data: Mapping[str, str] = field(default_factory=dict)
    """`data-*` attributes of the cell (for links and tests)."""
    header: bool = False

    def __post_init__(self) -> None:
        _check_tone(self.tone)
        for key in self.data:
            if not re.match(r"^[a-z][a-z0-9]*$", key):
                raise ValueError(f"data key {key!r} must be lower-case letters and digits")


@dataclass(frozen=True, slots=True)
class TableRow:
    """A row of cells; with `event`, the row is left out when the agent filter hides it."""

    cells: tuple[Cell, ...]
    event: int | None = None
    data: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Table:
    """A table or grid: header cells, then rows (a row's first cell may be a header)."""

    title: str
    head: tuple[Cell, ...]
    rows: tuple[TableRow, ...]
    note: str = ""
    name: str = ""
    """A class of the table element (for tests and links)."""

    def __post_init__(self) -> None:
        _check_class(self.name)


@dataclass(frozen=True, slots=True)
class GraphNode:
    """A node at (x, y) (its centre, in pixels), with up to four lines of text."""

    id: str
    x: float
    y: float
    lines: tuple[str, ...]
    title: str = ""
    tone: Tone = ""
    border: Literal["", "strong", "dashed", "dotted"] = ""
    event: int | None = None
    """The event the node stands for: a click opens it; the agent filter may leave it out."""
    data: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_tone(self.tone)


@dataclass(frozen=True, slots=True)
class GraphEdge:
    """An arrow from `source` to `target` (drawn from the source's left to the target's right)."""

    source: str
    target: str
    title: str = ""
    tone: Tone = ""
    dashed: bool = False

    def __post_init__(self) -> None:
        _check_tone(self.tone)


@dataclass(frozen=True, slots=True)
class Legend:
    """One line of a graph's legend: a swatch in the tone and border of the nodes it explains."""

    text: str
    tone: Tone = ""
    border: Literal["", "strong", "dashed", "dotted"] = ""


@dataclass(frozen=True, slots=True)
class Graph:
    """A laid-out graph (positions computed in Python, networkx's layouts for instance)."""

    title: str
    nodes: tuple[GraphNode, ...]
    edges: tuple[GraphEdge, ...]
    width: float
    height: float
    node_width: float = 180
    node_height: float = 72
    columns: tuple[tuple[float, str], ...] = ()
    """Titles above the drawing, at x."""
    legend: tuple[Legend, ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class Series:
    """A line of a plot: (x, y) points, y None where unknown."""

    name: str
    points: tuple[tuple[float, float | None], ...]
    dashed: bool = False


@dataclass(frozen=True, slots=True)
class Plot:
    """A line plot."""

    title: str
    series: tuple[Series, ...]
    xlabel: str = ""
    ylabel: str = ""
    ymin: float = 0.0
    ymax: float = 1.0
    note: str = ""


@dataclass(frozen=True, slots=True)
class Timeline:
    """Events as the generic timeline lists them (round, turn, agent, channel, text, label)."""

    title: str
    events: tuple[int, ...]
    note: str = ""


@dataclass(frozen=True, slots=True)
class Prose:
    """A paragraph (a note, or why a panel is missing)."""

    text: str
    title: str = ""
    tone: Tone = ""


@dataclass(frozen=True, slots=True)
class Choice:
    """One option of a `Switch` and the panels it shows."""

    label: str
    panels: tuple[Panel, ...]


@dataclass(frozen=True, slots=True)
class Switch:
    """A menu that shows one choice's panels at a time (say, one graph per citation judge)."""

    title: str
    label: str
    choices: tuple[Choice, ...]
    note: str = ""
    name: str = ""

    def __post_init__(self) -> None:
        _check_class(self.name)


Panel: TypeAlias = "Table | Graph | Plot | Timeline | Prose | Switch"


@dataclass(frozen=True, slots=True)
class Row:
    """One conversation's figures (by column key), its badges, and why figures are missing."""

    values: Mapping[str, Scalar] = field(default_factory=dict)
    badges: tuple[Chip, ...] = ()
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Page:
    """What one conversation's page shows: badges beside its title, then its panels."""

    panels: tuple[Panel, ...]
    badges: tuple[Chip, ...] = ()


@dataclass(frozen=True, slots=True)
class ViewOptions:
    """What the viewer passes: the judge whose labels to show (None: the paradigm's choice)."""

    judge: str | None = None


RowsFunction = Callable[["RunTables", ViewOptions], Mapping[str, Row]]
PageFunction = Callable[["RunTables", str, ViewOptions], Page]


@dataclass(frozen=True)
class View:
    """A paradigm's view (`Paradigm.view`).

    - `columns`: the figures of one conversation (a tuple, or a function of the run's manifest
      when they depend on the design, like one column per checkpoint).
    - `rows(tables, options)`: conversation id -> `Row`, for the finished conversations of
      `tables` (a page of the run); unfinished ones get no figures and say so.
    - `page(tables, conversation_id, options)`: the panels of one conversation (any status).
    - `round_label(number)`: the paradigm's name of a round or checkpoint number (T0, R1, ...).
    - `reads`: event columns the rows need beyond the cheap ones (`"text"`, `"meta"`).
    """

    columns: Sequence[Column] | Callable[[Mapping[str, Any]], Sequence[Column]] = ()
    rows: RowsFunction | None = None
    page: PageFunction | None = None
    round_label: Callable[[int], str] | None = None
    reads: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        unknown = set(self.reads) - {"text", "meta"}
        if unknown:
            raise ValueError(
                f"a view reads only 'text' and 'meta' beyond the core columns, "
                f"not {sorted(unknown)}"
            )

    def columns_for(self, manifest: Mapping[str, Any]) -> tuple[Column, ...]:
        """The columns of a run (by its manifest)."""
        found = self.columns(manifest) if callable(self.columns) else self.columns
        columns = tuple(found)
        keys = [c.key for c in columns]
        if len(set(keys)) != len(keys):
            raise ValueError(f"column keys repeat: {keys}")
        return columns

    def label(self, number: int) -> str:
        """A round number as the paradigm names it (the number itself by default)."""
        return str(number) if self.round_label is None else str(self.round_label(number))


def as_json(value: Any) -> Any:
    """A view's data as JSON-able values: each dataclass a dict with its `type` and the fields
    that differ from their defaults."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {"type": type(value).__name__.lower()}
        for f in dataclasses.fields(value):
            got = getattr(value, f.name)
            if f.default is not dataclasses.MISSING and got == f.default:
                continue  # the front end knows the defaults: keep pages small
            if f.default_factory is not dataclasses.MISSING and got == f.default_factory():
                continue
            out[f.name] = as_json(got)
        return out
    if isinstance(value, Mapping):
        return {str(k): as_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [as_json(v) for v in value]
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A table's rows as dicts keyed by column name (what a view walks to build its panels)."""
    names = [str(c) for c in frame.columns]
    values = [frame.iloc[:, i].tolist() for i in range(len(names))]  # one conversion per column
    return [dict(zip(names, row, strict=True)) for row in zip(*values, strict=True)]
