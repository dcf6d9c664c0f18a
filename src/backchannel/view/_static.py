"""`view RUN --static DIR`: a self-contained copy that opens from file:// (for sharing).

Data files are scripts that hand their JSON to the page (`BC.deliver(key, data)`), because a
page opened from a file may load scripts but may not fetch files. The copy is written to a
temporary folder beside DIR and moved in place only when complete.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from glob import escape as glob_escape
from importlib import resources
from pathlib import Path
from typing import Any

from backchannel.errors import RunDirectoryError
from backchannel.view._headline import finite
from backchannel.view._page import index_html
from backchannel.view._query import ListQuery
from backchannel.view._reader import RunReader

_PAGE = 500
MARK = ".backchannel-static"
"""The file that marks a folder as a static copy (what may be replaced by a new copy)."""


def _script(key: str, data: Any) -> str:
    """A data file: valid JSON is a valid JS expression; `<` is escaped as well for safety."""
    text = json.dumps(finite(data), ensure_ascii=True, default=str).replace("<", "\\u003c")
    return f"BC.deliver({json.dumps(key)}, {text});\n"


def _search_text(conversation: dict[str, Any]) -> str:
    meta = conversation["meta"] if isinstance(conversation["meta"], dict) else {}
    item = meta.get("item") if isinstance(meta.get("item"), dict) else {}
    question = str(item.get("question", "")) if item else ""
    return " ".join([conversation["conversation_id"], conversation["item_id"], question]).lower()


def write_static(readers: list[RunReader], directory: Path) -> Path:
    """Write the page, its assets and every conversation of every run into `directory`: a new
    or empty folder, or an earlier static copy (which is replaced whole)."""
    if directory.exists() and not directory.is_dir():
        raise RunDirectoryError(f"{directory} is a file; pass a directory for --static")
    earlier = directory.is_dir() and any(directory.iterdir())
    if earlier and not (directory / MARK).is_file():
        raise RunDirectoryError(
            f"{directory} is not empty and holds no static copy written by `backchannel view "
            "--static` (nothing was changed); pass an empty or new directory for --static"
        )
    parent = directory.parent
    parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{directory.name}.static-"
    for stale in parent.glob(f"{glob_escape(prefix)}*"):  # left by a copy that was killed
        if stale.is_dir():
            shutil.rmtree(stale, ignore_errors=True)
    staging = Path(tempfile.mkdtemp(dir=parent, prefix=prefix))
    try:
        _write(readers, staging)
        (staging / MARK).write_text(
            json.dumps({"written_by": "backchannel view --static", "runs": len(readers)}) + "\n",
            encoding="utf-8",
        )
        _replace(staging, directory, prefix)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return directory / "index.html"


def _replace(staging: Path, directory: Path, prefix: str) -> None:
    """Move the finished copy to `directory`. An earlier copy goes aside first, under the
    staging prefix (a kill between the two renames leaves a folder the next copy removes), and
    comes back if the new copy cannot take its place."""
    if not directory.exists():
        os.rename(staging, directory)
        return
    holder = Path(tempfile.mkdtemp(dir=directory.parent, prefix=prefix))
    aside = holder / "old"
    os.rename(directory, aside)
    try:
        os.rename(staging, directory)
    except BaseException:
        os.rename(aside, directory)
        raise
    finally:
        if not aside.exists() or directory.exists():
            shutil.rmtree(holder, ignore_errors=True)


def _write(readers: list[RunReader], folder: Path) -> None:
    static = resources.files("backchannel.view") / "static"
    shutil.copytree(str(static), folder / "static")
    (folder / "index.html").write_text(index_html(static=True), encoding="utf-8")
    data = folder / "data"
    data.mkdir()
    # A shared copy names each run's folder, not where it lay on the machine that wrote it.
    summaries = [{**r.summary(), "directory": r.directory.name} for r in readers]
    (data / "runs.js").write_text(_script("runs", {"runs": summaries}), encoding="utf-8")
    for index, reader in enumerate(readers):
        run_folder = data / f"r{index}"
        run_folder.mkdir()
        rows: list[dict[str, Any]] = []
        offset = 0
        while True:
            page = reader.page(ListQuery(offset=offset, limit=_PAGE))
            for row in page["conversations"]:
                number = len(rows)
                found = reader.conversation(row["conversation_id"], judges=True)
                assert found is not None
                for event in found["events"]:
                    full = reader.event(row["conversation_id"], int(event["seq"]))
                    event["prompt"] = full["prompt"] if full else []
                (run_folder / f"c{number}.js").write_text(
                    _script(f"conv/{index}/{number}", found), encoding="utf-8"
                )
                rows.append(
                    {**row, "_file": number, "_search": _search_text(found["conversation"])}
                )
            offset += _PAGE
            if offset >= page["total"]:
                break
        (run_folder / "list.js").write_text(_script(f"list/{index}", rows), encoding="utf-8")
        metrics = reader.headline()
        (run_folder / "metrics.js").write_text(
            _script(f"metrics/{index}", metrics), encoding="utf-8"
        )
        (run_folder / "divergent.js").write_text(
            _script(f"divergent/{index}", reader.divergent()), encoding="utf-8"
        )
