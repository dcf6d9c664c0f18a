"""Many runs in one SQL query: DuckDB views over the runs' tidy tables, each row carrying its
run, so models, designs and versions compare across runs in one statement.

A source is a run directory (its tables are read through the run store, read-only) or a folder
of `backchannel export --format parquet` (DuckDB reads the Parquet files themselves, only the
columns and rows a query needs). Nothing is ever written to a run: the views live in an
in-memory database.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from backchannel.errors import ConfigError, RunDirectoryError
from backchannel.interop._extras import need

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

RUN_COLUMN = "run"
"""The column every view starts with: the run's label (its folder's name unless given)."""
COMMON_TABLES = ("events", "labels", "conversations")
RUNS_VIEW = "runs"


class Runs:
    """Read-only DuckDB views over several runs: `events`, `labels`, `conversations`, every
    paradigm table any of them has (such as `citations`), and `runs` (one row per run: its
    label, path, run id, experiment, paradigm, seed, package version, state)."""

    def __init__(self, sources: Mapping[str, Path]) -> None:
        duck = need("duckdb")
        if not sources:
            raise ConfigError("give at least one run directory or Parquet export to query")
        self._connection: duckdb.DuckDBPyConnection = duck.connect(":memory:")
        self.labels = list(sources)
        self.paths = dict(sources)
        parts: dict[str, list[str]] = {}
        manifests: list[dict[str, Any]] = []
        try:
            for index, (label, path) in enumerate(sources.items()):
                manifest, tables = self._attach(index, path)
                manifests.append(_run_row(label, path, manifest))
                for table, relation in tables.items():
                    parts.setdefault(table, []).append(
                        f"SELECT {_literal(label)} AS {RUN_COLUMN}, * FROM {relation}"
                    )
            for table, selects in parts.items():
                union = " UNION ALL BY NAME ".join(f"({s})" for s in selects)
                self._connection.execute(f"CREATE VIEW {_name(table)} AS {union}")
            self._connection.register("_runs", _frame(manifests))
            self._connection.execute(f"CREATE VIEW {RUNS_VIEW} AS SELECT * FROM _runs")
        except duck.Error as error:
            self.close()
            raise ConfigError(f"cannot combine the runs' tables: {_first_line(error)}") from None
        except BaseException:
            self.close()
            raise
        self.tables = (*parts, RUNS_VIEW)

    @property
    def connection(self) -> duckdb.DuckDBPyConnection:
        """The DuckDB connection holding the views (for `.sql(...)`, `.execute(...)`)."""
        return self._connection

    def sql(self, query: str) -> pd.DataFrame:
        """The result of one SQL query over the views, as a DataFrame."""
        duck = need("duckdb")
        try:
            return self._connection.execute(query).fetchdf()
        except duck.Error as error:
            raise ConfigError(f"the query failed: {_first_line(error)}") from None

    def close(self) -> None:
        self._connection.close()

    def __enter__(self) -> Runs:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Runs({', '.join(self.labels)}; views: {', '.join(self.tables)})"

    def _attach(self, index: int, path: Path) -> tuple[dict[str, Any], dict[str, str]]:
        """Make one source's tables queryable; returns its manifest and table -> relation."""
        from backchannel.store import DATABASE_NAME

        if (path / DATABASE_NAME).is_file():
            return self._attach_store(index, path)
        if (path / "events.parquet").is_file():
            return _attach_parquet(path)
        if (path / "events.csv").is_file():
            raise RunDirectoryError(
                f"{path} holds a CSV export; query a run directory or a Parquet export "
                "(`backchannel export RUN --format parquet -o DIR`)"
            )
        raise RunDirectoryError(
            f"{path} is neither a run directory (no {DATABASE_NAME}) nor a Parquet export "
            "(no events.parquet); give a run directory or `backchannel export RUN -o DIR`"
        )

    def _attach_store(self, index: int, path: Path) -> tuple[dict[str, Any], dict[str, str]]:
        from backchannel.store import RunStore

        store = RunStore(path, readonly=True)
        try:
            tables = store.tables()
        finally:
            store.close()
        frames = {
            "events": tables.events,
            "labels": tables.labels,
            "conversations": tables.conversations,
            **_paradigm_tables(tables),
        }
        relations: dict[str, str] = {}
        for table, frame in frames.items():
            registered = f"_run{index}_{table}"
            self._connection.register(registered, _uniform(frame))
            relations[table] = _name(registered)
        return tables.manifest, relations


def open_runs(runs: Iterable[str | Path] | Mapping[str, str | Path]) -> Runs:
    """Several runs (run directories or Parquet exports) as DuckDB views with a `run` column.

    A list labels each run by its folder's name (the path as given when two names clash); a
    mapping gives the labels. `Runs.sql("...")` returns a DataFrame.
    """
    if isinstance(runs, Mapping):
        sources = {str(label): Path(path) for label, path in runs.items()}
    else:
        sources = run_labels([Path(p) for p in runs])
    return Runs(sources)


def run_labels(paths: list[Path]) -> dict[str, Path]:
    """Each path's label: its folder's name, or the path as given when names clash."""
    names = [p.absolute().name for p in paths]
    labels: dict[str, Path] = {}
    for path, name in zip(paths, names, strict=True):
        label = name if names.count(name) == 1 else str(path)
        if label in labels:
            raise ConfigError(f"{path} is given twice; give each run once")
        labels[label] = path
    return labels


def _attach_parquet(path: Path) -> tuple[dict[str, Any], dict[str, str]]:
    manifest: dict[str, Any] = {}
    try:
        manifest = json.loads((path / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    relations = {
        file.stem: f"read_parquet({_literal(str(file.absolute()))})"
        for file in sorted(path.glob("*.parquet"))
    }
    return manifest, relations


def _paradigm_tables(tables: Any) -> dict[str, pd.DataFrame]:
    """The paradigm's own tables, as `export` writes them; none if it is not installed."""
    from backchannel.paradigms import get_paradigm

    name = tables.manifest.get("paradigm")
    if not name:
        return {}
    try:
        paradigm = get_paradigm(str(name))
    except ConfigError:
        return {}
    return dict(paradigm.tables(tables))


def _run_row(label: str, path: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    state = manifest.get("run_state") or {}
    return {
        RUN_COLUMN: label,
        "path": str(path),
        "run_id": manifest.get("run_id"),
        "experiment": manifest.get("name"),
        "paradigm": manifest.get("paradigm"),
        "seed": manifest.get("seed"),
        "package_version": manifest.get("package_version"),
        "git_commit": manifest.get("git_commit"),
        "factors": json.dumps(manifest.get("factors") or []),
        "complete": state.get("complete"),
        "manifest": json.dumps(manifest, sort_keys=True, default=str),
    }


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows)


def _uniform(frame: pd.DataFrame) -> pd.DataFrame:
    """Columns whose values mix types (a factor with levels 1 and "x") become text, as in the
    Parquet export, so DuckDB can type every column."""
    mixed = [
        column
        for column in frame.columns
        if frame[column].dtype == object
        and len({type(v) for v in frame[column] if v is not None and v == v}) > 1
    ]
    if not mixed:
        return frame
    return frame.assign(**{c: frame[c].map(lambda v: None if v is None else str(v)) for c in mixed})


def _name(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _first_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
