"""Write a run store of schema version 3 (rows as the tidy tables are, each event's prompt inside
its meta) from a run's tables: the stores earlier versions of backchannel wrote."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd

from backchannel.analysis import RunTables
from backchannel.store import DATABASE_NAME
from backchannel.store._schema import SCHEMA_V3


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _none(value: Any) -> Any:
    """A frame's missing value (None, NaN, NA) as SQL NULL."""
    return None if value is None or pd.isna(value) else value


def write_v3(tables: RunTables, directory: Path, usage: list[tuple[object, ...]]) -> Path:
    """A version 3 store of `tables` (+ usage rows of `(conversation_id, model, ...)`)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / DATABASE_NAME
    prompts = {
        (cid, int(seq)): json.loads(text)
        for cid, seq, text in tables.prompts[["conversation_id", "seq", "prompt"]].itertuples(
            index=False
        )
    }
    db = sqlite3.connect(path)
    db.executescript(SCHEMA_V3)
    db.executemany(
        "INSERT INTO manifest VALUES (?, ?)",
        [(k, _json(v)) for k, v in tables.manifest.items() if k != "run_state"],
    )
    for position, row in enumerate(tables.conversations.itertuples(index=False)):
        db.execute(
            "INSERT INTO conversations VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                row.conversation_id,
                row.cell_key,
                row.cell,
                row.item_id,
                int(row.replicate),
                int(row.seed),
                row.status,
                _none(row.error),
                row.meta,
                position,
                float(position),
            ),
        )
    for e in tables.events.itertuples(index=False):
        meta = json.loads(e.meta)
        prompt = prompts.get((e.conversation_id, int(e.seq)))
        if prompt is not None:
            meta["prompt"] = prompt
        db.execute(
            "INSERT INTO events (conversation_id, seq, kind, name, round, turn, agent, role, "
            "channel, text, value, status, model, prompt_tokens, completion_tokens, latency_s, "
            "cached, meta, reasoning, reasoning_tokens) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                e.conversation_id,
                int(e.seq),
                e.kind,
                e.name,
                int(e.round),
                None if _none(e.turn) is None else int(e.turn),
                e.agent,
                e.role,
                e.channel,
                e.text,
                _none(e.value),
                e.status,
                e.model,
                int(e.prompt_tokens),
                int(e.completion_tokens),
                float(e.latency_s),
                int(e.cached),
                _json(meta),
                e.reasoning,
                int(e.reasoning_tokens),
            ),
        )
    db.executemany(
        "INSERT INTO labels VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (
                r.conversation_id,
                int(r.event_seq),
                r.judge,
                _none(r.label),
                r.status,
                r.text,
                r.model,
            )
            for r in tables.labels.itertuples(index=False)
        ],
    )
    db.executemany("INSERT INTO usage VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", usage)
    db.execute("PRAGMA user_version = 3")
    db.commit()
    db.close()
    return path
