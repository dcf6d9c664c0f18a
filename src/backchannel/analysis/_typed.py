"""Typed results: the models a paradigm's metrics are validated into, and the design's cells.

A paradigm builds its figures as before (frames, records) and returns them as a `Metrics`
subclass whose fields are typed; the report, the `metrics` tables, the viewer and `--json` all
read that one model. Rows of a per-cell table are `CellRow`s: their declared fields are the
measures, every other key is one of the run's declared factors (checked when validated), so a
factor can never hide in a row, and a row can never carry a key nobody declared.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny

from backchannel.analysis._divergence_results import Divergence
from backchannel.analysis._influence_results import Influence
from backchannel.analysis._records import FACTORS_CONTEXT, CellRow, Record

if TYPE_CHECKING:
    import pandas as pd

    from backchannel.analysis._headline import Headline
    from backchannel.analysis._tables import RunTables

M = TypeVar("M", bound="Metrics")

KIT_SECTIONS = ("divergence", "influence", "validity")
"""The optional sections every paradigm's metrics may carry, filled by the shared layer."""
KIT_RUN_LEVEL = frozenset({"divergence.tests"})
"""Parts of the kit's sections that compare cells, so belong to no one cell."""


@dataclass(frozen=True, slots=True)
class Design:
    """The run's declared factors, in the experiment's order: the one source of a run's cells.

    Metrics group by these, never by a list a paradigm keeps by hand; a section that averages
    over one of them names it (`pooled`), so nothing is pooled silently.
    """

    factors: tuple[str, ...]

    @classmethod
    def of(cls, tables: RunTables) -> Design:
        """The factors the run declared that its conversations carry as columns."""
        columns = set(tables.conversations.columns)
        return cls(tuple(f for f in tables.factors if f in columns))

    def by(self, *, pooled: Sequence[str] = (), extra: Sequence[str] = ()) -> list[str]:
        """Grouping columns: every factor except the `pooled` ones, then `extra` keys."""
        unknown = [p for p in pooled if p not in self.factors and p not in extra]
        if unknown:
            raise ValueError(f"pooled names {unknown} that are not factors of the run")
        return [f for f in self.factors if f not in pooled] + [e for e in extra if e not in pooled]

    def pooled(self, names: Sequence[str]) -> list[str]:
        """Those of `names` that are factors of this run (what a section averages over)."""
        return [f for f in self.factors if f in names]

    def levels(self, conversations: pd.DataFrame) -> dict[str, dict[str, Any]]:
        """Each conversation's level of every factor, by conversation id, exactly as its cell
        declared it (the `cell` JSON, where a factor column may have turned 2 into 2.0 beside
        a null level); a conversation without `cell` falls back to its factor columns.
        Conversations of one cell share its level values (a list level is one list): read them."""
        ids = [str(cid) for cid in conversations["conversation_id"].tolist()]
        cells = (
            _cells_of(conversations["cell"].tolist())
            if "cell" in conversations.columns
            else [None] * len(ids)
        )
        columns = {
            f: conversations[f].tolist() if f in conversations.columns else [None] * len(ids)
            for f in self.factors
        }
        return {
            cid: {
                f: cell[f] if cell is not None and f in cell else _plain(columns[f][i])
                for f in self.factors
            }
            for i, (cid, cell) in enumerate(zip(ids, cells, strict=True))
        }


class Metrics(BaseModel):
    """Base of a paradigm's typed results. Subclasses declare their sections as fields, in the
    order `--json` prints them.

    Every list of `CellRow`s (at any depth) must carry every factor of the run, except those its
    path names in `pooled` (a section that averages over a factor by design says so there); a
    field listed in `run_level` holds whole-run figures that are not per cell by nature
    (failure counts, judge agreement). `separation_problems` checks both.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    run_level: ClassVar[frozenset[str]] = frozenset()
    """Fields that are whole-run by nature: counts, options, agreement between judges; a
    dotted path (`tests.models`) names a part of a section."""

    pooled: dict[str, list[str]] = Field(default_factory=dict)
    """Section path (e.g. `network.infection_by_model`) -> the factors it averages over."""
    divergence: Divergence | None = None
    """Say versus believe (docs/divergence.md): filled by the shared layer from the
    paradigm's `stance_pairs` after its `metrics()`; None when the paradigm reads no stances."""
    validity: SerializeAsAny[Record] | None = None
    """The validity checks (an `analysis.Validity`: awareness, order effects), filled by the
    shared layer after the paradigm's own metrics."""
    influence: Influence | None = None
    """The Friedkin-Johnsen fit per cell, model and channel (docs/influence.md), filled by the
    shared layer from the paradigm's `opinion_trajectories`; None without them."""

    @classmethod
    def build(cls: type[M], data: Mapping[str, Any], design: Design | Sequence[str]) -> M:
        """Validate JSON-able figures (as `analysis.jsonable` gives them) into the model;
        rows may carry the design's factors and nothing undeclared."""
        factors = design.factors if isinstance(design, Design) else tuple(design)
        return cls.model_validate(data, context={FACTORS_CONTEXT: factors})

    def as_json(self) -> dict[str, Any]:
        """What `backchannel metrics RUN --json` prints (`pooled` only when something is)."""
        data = self.model_dump(mode="json")
        if not data.get("pooled"):
            data.pop("pooled", None)
        for name in KIT_SECTIONS:  # the kit's sections follow the paradigm's own
            value = data.pop(name, None)
            if value is not None:
                data[name] = value
        return data

    def headline(self) -> Headline | None:
        """The table these results lead with, in the study's layout (None: no headline)."""
        return None

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every table of these results as a DataFrame, named as `backchannel metrics RUN`
        names its sections (`fpi.by_cell`, `pairings.main`, ...): a list of rows is one frame
        (factors first, nested parts as dotted columns), the figures of a part one row."""
        frames: dict[str, pd.DataFrame] = {}
        _frames(self.as_json(), "", frames)
        return frames

    def frame(self, name: str) -> pd.DataFrame:
        """One table of `frames()` by its name (a `KeyError` lists the names there are)."""
        frames = self.frames()
        if name not in frames:
            raise KeyError(f"no table {name!r}; tables: {', '.join(frames)}")
        return frames[name]

    def sections(self) -> Iterator[tuple[str, Any]]:
        """(name, value) of every section field, in order."""
        for name in type(self).model_fields:
            if name != "pooled" and name not in KIT_SECTIONS:
                yield name, getattr(self, name)
        for name in KIT_SECTIONS:
            yield name, getattr(self, name)


def _frames(data: Mapping[str, Any], path: str, out: dict[str, pd.DataFrame]) -> None:
    """The tables of a JSON tree, depth first: its plain figures as one row, each list of
    records as one frame, nested mappings under their dotted path."""
    import pandas as pd

    def plain(value: Any) -> bool:
        if isinstance(value, list):
            return all(not isinstance(v, Mapping | list) for v in value)
        return not isinstance(value, Mapping)

    figures = {k: v for k, v in data.items() if plain(v)}
    if figures:
        out[path or "summary"] = pd.DataFrame([figures])
    for key, value in data.items():
        if key in figures:
            continue
        name = f"{path}.{key}" if path else str(key)
        if isinstance(value, Mapping):
            _frames(value, name, out)
        elif all(isinstance(v, Mapping) for v in value):
            out[name] = pd.json_normalize(value, sep=".") if value else pd.DataFrame()


def separation_problems(metrics: Metrics, design: Design | Sequence[str]) -> list[str]:
    """Where `metrics` averages over a factor without saying so: a per-cell row lacking a factor
    its section does not declare pooled, or a figure outside any per-cell table in a field not
    declared whole-run. Empty when every factor is separated or named."""
    factors = design.factors if isinstance(design, Design) else tuple(design)
    problems: list[str] = []
    for name, value in metrics.sections():
        run_level = type(metrics).run_level | KIT_RUN_LEVEL
        _walk(value, name, factors, metrics.pooled, problems, run_level)
    return problems


def _walk(
    value: Any,
    path: str,
    factors: Sequence[str],
    pooled: Mapping[str, Sequence[str]],
    out: list[str],
    run_level: frozenset[str] = frozenset(),
) -> None:
    if path in run_level:
        return
    if isinstance(value, CellRow):
        named = set(pooled.get(_section_of(path, pooled), ()))
        missing = [f for f in factors if f not in value.cell and f not in named]
        if missing:
            out.append(f"{path}: a row without the factor(s) {', '.join(missing)}")
        return
    if isinstance(value, BaseModel):
        for field in type(value).model_fields:
            _walk(getattr(value, field), f"{path}.{field}", factors, pooled, out, run_level)
        return
    if isinstance(value, Mapping):
        for key, item in value.items():
            _walk(item, f"{path}.{key}", factors, pooled, out, run_level)
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _walk(
                item,
                f"{path}[{index}]" if not isinstance(item, CellRow) else path,
                factors,
                pooled,
                out,
                run_level,
            )
        return
    named = set(pooled.get(_section_of(path, pooled), ()))
    if value is not None and not isinstance(value, str | bool) and not set(factors) <= named:
        out.append(f"{path}: a figure for the whole run, outside any per-cell table")


def _section_of(path: str, pooled: Mapping[str, Sequence[str]]) -> str:
    """The longest declared section path that `path` lies in (or `path` itself)."""
    inside = [d for d in pooled if path == d or path.startswith((d + ".", d + "["))]
    return max(inside, key=len, default=path)


def rows_frame(rows: Sequence[BaseModel]) -> pd.DataFrame:
    """Typed rows as a tidy frame (factors first), for figures and tables."""
    import pandas as pd

    return pd.DataFrame([row.model_dump(mode="json") for row in rows])


def cell_groups(
    frame: pd.DataFrame,
    keys: Sequence[str],
    levels: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """The rows of `frame` per combination of `keys`, in the natural order of their values
    (missing first, then numbers, text, and lists or mappings by their JSON text).

    A key is a factor of `levels` (conversation id -> its factor levels, as `Design.levels`
    reads them), looked up by each row's `conversation_id` (even where `frame` has a column of
    that name), or else a column of `frame`; values may be missing, lists or mappings. No
    keys: the whole frame, as one group (even when empty).
    """
    if not keys:
        return [({}, frame)]
    import numpy as np
    import pandas as pd

    factors = {f for cell in (levels or {}).values() for f in cell}
    by_conversation: tuple[Any, list[str]] | None = None
    coded: list[tuple[np.ndarray, list[Any]]] = []
    for key in keys:
        if key in factors:
            assert levels is not None
            if by_conversation is None:  # each conversation's rows share its levels
                rows, uniques = pd.factorize(frame["conversation_id"], use_na_sentinel=False)
                by_conversation = rows, [str(c) for c in uniques.tolist()]
            rows, ids = by_conversation
            coded.append(_recoded(rows, [levels[cid].get(key) for cid in ids]))
        elif key in frame.columns:
            coded.append(_column_codes(frame[key]))
        else:
            raise KeyError(f"{key!r} is neither a column nor a factor with levels")
    combined = np.zeros(len(frame), dtype=np.int64)
    for codes, distinct in coded:  # renumbered at each key, so the product never overflows
        combined = np.unique(combined * max(1, len(distinct)) + codes, return_inverse=True)[1]
    inverse = combined.reshape(-1)
    positions = np.argsort(inverse, kind="stable")
    bounds = np.flatnonzero(np.diff(inverse[positions])) + 1
    groups = np.split(positions, bounds) if len(positions) else []
    groups.sort(key=lambda g: int(g[0]))  # first appearance, as ties in the order keep it
    keyed = list(zip(keys, coded, strict=True))
    cells = [{key: distinct[int(codes[g[0]])] for key, (codes, distinct) in keyed} for g in groups]
    order = sorted(range(len(groups)), key=lambda i: tuple(_natural(v) for v in cells[i].values()))
    return [(cells[i], frame.iloc[groups[i]]) for i in order]


def _factorized(values: list[Any]) -> tuple[Any, list[Any]]:
    """Each value's code (by its JSON text) and one value per code, in order of appearance."""
    import numpy as np

    known: dict[str, int] = {}
    distinct: list[Any] = []
    codes = np.empty(len(values), dtype=np.int64)
    for i, (value, text) in enumerate(zip(values, _json_texts(values), strict=True)):
        code = known.get(text)
        if code is None:
            code = known[text] = len(distinct)
            distinct.append(value)
        codes[i] = code
    return codes, distinct


def _recoded(rows: Any, values: list[Any]) -> tuple[Any, list[Any]]:
    """Codes of per-row values given by `values[rows]`, merging values with one JSON text."""
    codes, distinct = _factorized(values)
    return codes[rows], distinct


def _column_codes(column: pd.Series) -> tuple[Any, list[Any]]:
    """A key column's codes: factorized by pandas where its dtype holds plain scalars (one
    Python value per distinct scalar), else value by value (lists, mappings, mixed types)."""
    import pandas as pd

    plain = column.dtype != object and not isinstance(column.dtype, pd.CategoricalDtype)
    if plain or pd.api.types.infer_dtype(column, skipna=True) in ("string", "empty"):
        rows, uniques = pd.factorize(column, use_na_sentinel=False)
        return _recoded(rows, [_plain(v) for v in uniques.tolist()])
    return _factorized([_plain(v) for v in column.tolist()])


def _json_texts(column: list[Any]) -> list[str]:
    """Each value's JSON text (sorted keys), worked out once per distinct scalar value: a key
    column holds few distinct values over many rows."""
    known: dict[tuple[type, Any], str] = {}
    texts = []
    for value in column:
        key = (type(value), value)
        try:
            text = known.get(key)
        except TypeError:  # unhashable (a list or mapping level)
            texts.append(json.dumps(value, sort_keys=True, default=str))
            continue
        if text is None:
            text = known[key] = json.dumps(value, sort_keys=True, default=str)
        texts.append(text)
    return texts


def _cells_of(texts: list[Any]) -> list[dict[str, Any] | None]:
    """Each conversation's cell, decoded once per distinct JSON text (a design has few cells
    and many conversations); conversations of one cell share its dict: read it only."""
    decoded: dict[str, dict[str, Any] | None] = {}
    cells = []
    for text in texts:
        if isinstance(text, str):
            if text not in decoded:
                decoded[text] = _cell_of(text)
            cells.append(decoded[text])
        else:
            cells.append(_cell_of(text))
    return cells


def _cell_of(text: Any) -> dict[str, Any] | None:
    if isinstance(text, Mapping):
        return dict(text)
    if not isinstance(text, str) or not text:
        return None
    decoded = json.loads(text)
    return decoded if isinstance(decoded, dict) else None


def _plain(value: Any) -> Any:
    """A table value as plain Python: numpy scalars as numbers, NaN and missing as None."""
    if hasattr(value, "tolist") and not isinstance(value, list | tuple | dict | str):
        value = value.tolist()  # numpy scalars and arrays (a list level read from Parquet)
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def _natural(value: Any) -> tuple[int, float, str]:
    if value is None:
        return (0, 0.0, "")
    if isinstance(value, bool | int | float):
        return (1, float(value), "")
    if isinstance(value, str):
        return (2, 0.0, value)
    return (3, 0.0, json.dumps(value, sort_keys=True, default=str))
