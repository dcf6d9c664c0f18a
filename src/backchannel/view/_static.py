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
from importlib import resources
from pathlib import Path
from typing import Any

from backchannel.errors import RunDirectoryError
from backchannel.view._headline import finite
from backchannel.view._page import index_html
from backchannel.view._query import ListQuery
from backchannel.view._reader import RunReader

_PAGE = 500


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
    """Write the page, its assets and every conversation of every run into `directory`."""
    if directory.exists() and not directory.is_dir():
        raise RunDirectoryError(f"{directory} is a file; pass a directory for --static")
    if directory.exists() and any(directory.iterdir()) and not (directory / "index.html").exists():
        raise RunDirectoryError(
            f"{directory} is not empty and holds no earlier static copy; pass an empty or new "
            "directory for --static"
        )
    directory.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=directory.parent, prefix=f".{directory.name}-"))
    try:
        _write(readers, staging)
        if directory.exists():
            shutil.rmtree(directory)
        os.replace(staging, directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return directory / "index.html"


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
