"""What the transcript viewer shows of a testimony conversation, from the paradigm's own
functions on that conversation's tables: the analysed group's outcome at each checkpoint
(`checkpoint_outcomes`), every vote read by `vote_kind`, rounds named by `label_of` (T0, T1,
R1..RK), and the citation graph (`_citation_view`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from backchannel.analysis import RunTables, decode_json
from backchannel.paradigms._view import (
    Cell,
    Chip,
    Column,
    EventRef,
    Page,
    Panel,
    Prose,
    Row,
    Table,
    TableRow,
    Text,
    View,
    ViewOptions,
    records,
)
from backchannel.paradigms.testimony._citation_view import citations_panel, with_tables
from backchannel.paradigms.testimony._metrics import checkpoint_outcomes
from backchannel.paradigms.testimony._phases import label_of, participant_checkpoints
from backchannel.paradigms.testimony._votes import vote_kind

OUTCOME_TEXT = {"truth": "truth majority", "decoy": "decoy majority", "none": "no majority"}
OUTCOME_TONE: dict[str, Any] = {"truth": "positive", "decoy": "negative", "none": "muted"}
KIND_TONE: dict[str, Any] = {"true": "positive", "decoy": "negative", "failed": "warning",
                             "unknown": "muted"}  # fmt: skip
NEEDED = ("endpoint", "decoy", "agents", "majority", "rounds", "condition", "intervention",
          "deception", "key_message_kind")  # fmt: skip


def _rounds(manifest: Mapping[str, Any]) -> int:
    settings = (manifest.get("config_resolved") or {}).get("settings") or {}
    rounds = settings.get("rounds") if isinstance(settings, dict) else None
    return len(rounds) if isinstance(rounds, list) and rounds else 3


def columns(manifest: Mapping[str, Any]) -> tuple[Column, ...]:
    """The final outcome and vote counts, then the outcome at every checkpoint (filters only)."""
    return (
        Column("outcome", "outcome", "at the last checkpoint: truth, decoy or no majority"),
        Column("true_final", "true", "analysed agents voting the true endpoint at the end"),
        Column("decoy_final", "decoy", "analysed agents voting the decoy at the end"),
        Column("first_truth", "first truth", "first checkpoint with a truth majority"),
        *(
            Column(label, label, f"outcome at {label}: truth, decoy or none", shown=False)
            for label in participant_checkpoints(_rounds(manifest))
        ),
    )


def _meta(text: Any) -> dict[str, Any]:
    found = decode_json(text)
    return found if isinstance(found, dict) else {}


def rows(tables: RunTables, options: ViewOptions) -> dict[str, Row]:
    """Per conversation: the outcome at every checkpoint, the final outcome and vote counts."""
    return tables.memo(("testimony.view.rows",), lambda: _rows(tables))


def _rows(tables: RunTables) -> dict[str, Row]:
    done = tables.done_conversations()
    complete = done["meta"].map(lambda m: all(k in m for k in NEEDED))
    found = {
        str(cid): Row(note="the conversation lacks the environment the figures need")
        for cid in done.loc[~complete, "conversation_id"]
    }
    if complete.all():
        outcomes = checkpoint_outcomes(tables)
    else:
        kept = tables.conversations["conversation_id"].isin(done.loc[complete, "conversation_id"])
        outcomes = checkpoint_outcomes(
            with_tables(tables, tables.conversations[kept], tables.labels)
        )
    outcomes = outcomes[outcomes["group"] == "participants"]
    for cid, timeline in outcomes.groupby("conversation_id", sort=False):
        final = timeline.iloc[-1]
        truth = timeline.loc[timeline["outcome"] == "truth", "checkpoint"].tolist()
        values: dict[str, Any] = {
            "outcome": str(final["outcome"]),
            "true_final": int(final["true"]),
            "decoy_final": int(final["decoy"]),
            "first_truth": str(truth[0]) if truth else None,
        }
        values.update(zip(timeline["checkpoint"], timeline["outcome"].astype(str), strict=True))
        at = str(final["checkpoint"])
        badge = Chip(f"{OUTCOME_TEXT[values['outcome']]} at {at}", OUTCOME_TONE[values["outcome"]])
        found[str(cid)] = Row(values, badges=(badge,))
    return found


def page(tables: RunTables, conversation_id: str, options: ViewOptions) -> Page:
    """The state chain and windows, every vote by checkpoint, the messages, the citation graph."""
    meta = _meta(tables.conversations["meta"].iloc[0]) if len(tables.conversations) else {}
    events = tables.events_of(done=False)
    found = records(events[events["conversation_id"] == conversation_id])
    row = rows(tables, options).get(conversation_id)
    timeline = ""
    if row is not None and row.note is None:
        labels = participant_checkpoints(int(meta["rounds"]))
        timeline = " · ".join(f"{c}: {row.values.get(c)}" for c in labels)
    panels: list[Panel] = [
        _chain(meta),
        _votes(meta, found, timeline),
        _messages(found),
        citations_panel(tables, conversation_id, meta),
    ]
    return Page(tuple(panels))


def _chain(meta: dict[str, Any]) -> Panel:
    env = meta.get("environment") or (meta.get("item") or {}).get("environment") or {}
    chain = env.get("chain") or []
    if not chain:
        return Prose("This conversation stores no state chain.", "State chain")
    windows: dict[str, Any] = env.get("windows") or {}
    roles = env.get("roles") or list(windows)
    role_of = {str(a["name"]): str(a["role"]) for a in meta.get("agents") or []}
    head = [Cell(("role",), header=True)]
    for i, node in enumerate(chain):
        endpoint = i == len(chain) - 1
        decoy = node.get("container") == env.get("decoy") and i == len(chain) - 2
        parts: list[Any] = [f"l{i} {node.get('container')}"]
        if node.get("actor"):
            parts.append(Text(f" ← {node['actor']}"))
        tone: Any = "positive" if endpoint else "negative" if decoy else ""
        head.append(Cell(tuple(parts), tone=tone, header=True, data={"node": str(i)}))
    body = []
    for role in roles:
        cells = [Cell((role, *((Chip(role_of[role], "", "role"),) if role in role_of else ())),
                      header=True)]  # fmt: skip
        for i in range(len(chain)):
            seen = any(s <= i <= e for s, e in windows.get(role) or [])
            cells.append(Cell(("seen",) if seen else (), tone="info" if seen else "",
                              data={"seen": "1" if seen else ""}))  # fmt: skip
        body.append(TableRow(tuple(cells), data={"agent": str(role)}))
    return Table(
        "State chain and observation windows",
        tuple(head),
        tuple(body),
        note=f"True endpoint {env.get('endpoint')}; decoy {env.get('decoy')}. A shaded cell: "
        "the role saw the object in that node.",
        name="chain",
    )


def _votes(meta: dict[str, Any], records: list[dict[str, Any]], timeline: str) -> Panel:
    endpoint, decoy = str(meta.get("endpoint")), str(meta.get("decoy"))
    agents = [str(a["name"]) for a in meta.get("agents") or []]
    checkpoints: list[str] = []
    votes: dict[tuple[str, str], dict[str, Any]] = {}
    for e in records:
        if e["kind"] == "probe" and e["name"] == "vote":
            label = label_of(int(e["round"]))
            if label not in checkpoints:
                checkpoints.append(label)
            votes[(str(e["agent"]), label)] = e
            if e["agent"] not in agents:
                agents.append(str(e["agent"]))
    body = []
    for agent in agents:
        cells = [Cell((agent,), header=True)]
        for c in checkpoints:
            vote = votes.get((agent, c))
            if vote is None:
                cells.append(Cell())
                continue
            ok = vote["status"] == "ok"
            kind = vote_kind(vote["value"] if ok else None, endpoint, decoy)
            shown = Text(str(vote["value"]) if ok else str(vote["text"]))
            cells.append(
                Cell(
                    (
                        EventRef(
                            int(vote["seq"]),
                            (Chip(kind, KIND_TONE.get(kind, ""), "belief"), shown),
                            body=False,
                        ),
                    ),
                    data={"checkpoint": c, "kind": kind},
                )
            )
        body.append(TableRow(tuple(cells), data={"agent": agent}))
    head = (Cell(("agent",), header=True), *(Cell((c,), header=True) for c in checkpoints))
    return Table("Private votes", head, tuple(body), note=timeline, name="votes")


def _messages(records: list[dict[str, Any]]) -> Panel:
    body = []
    for e in records:
        if e["kind"] != "message":
            continue
        m = e["meta"] or {}
        chips: list[Any] = [str(e["name"])]
        if m.get("kind") == "direct":
            chips.append(Chip("to " + ", ".join(m.get("recipients") or m.get("audience") or [])))
        elif m.get("kind") == "broadcast":
            chips.append(Chip("to everyone"))
        if m.get("truthful") is False:
            chips.append(Chip("false testimony", "negative", "adversary"))
        if m.get("supports"):
            chips.append(Chip(f"supports {m['supports']}"))
        body.append(
            TableRow(
                (
                    Cell((label_of(int(e["round"])),)),
                    Cell((str(e["agent"]),)),
                    Cell(tuple(chips)),
                    Cell((EventRef(int(e["seq"])),)),
                ),
                event=int(e["seq"]),
            )
        )
    head = tuple(Cell((h,), header=True) for h in ("round", "from", "kind", "text"))
    return Table("Testimonies and discussion", head, tuple(body), name="messages")


VIEW = View(columns=columns, rows=rows, page=page, round_label=label_of)
