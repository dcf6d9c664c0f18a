"""The poll's page in `backchannel view`: its own columns and panels, from outside the package.

The figures come from the same functions as the poll's metrics (`votes.py`) run
on the conversations the viewer shows; the viewer draws the returned data (no script needed).
"""

from __future__ import annotations

from typing import Any

import backchannel as bc
from backchannel.paradigms import (
    Cell,
    Chip,
    Column,
    EventRef,
    Page,
    Plot,
    Row,
    Series,
    Table,
    TableRow,
    Timeline,
    View,
    ViewOptions,
)
from backchannel_poll.votes import ballots, vote_changes

TONE: dict[str, Any] = {"yes": "positive", "no": "negative"}
COLUMNS = (
    Column("yes_before", "yes before", "share of readable ballots saying yes at checkpoint 0"),
    Column("yes_after", "yes after", "share of readable ballots saying yes at the last checkpoint"),
    Column("changed", "changed", "agents whose last readable vote differs from their first"),
    Column("unreadable", "unreadable", "ballots that could not be read", shown=False),
)


def _shares(tables: bc.RunTables) -> dict[tuple[str, int], float]:
    votes = ballots(tables)
    readable = votes[votes["status"] == "ok"]
    yes = (readable["vote"] == "yes").groupby([readable["conversation_id"], readable["round"]])
    means = yes.mean()
    keys = zip(means.index.get_level_values(0), means.index.get_level_values(1), strict=True)
    return {(str(c), int(r)): float(v) for (c, r), v in zip(keys, means.tolist(), strict=True)}


def rows(tables: bc.RunTables, options: ViewOptions) -> dict[str, Row]:
    """Each finished conversation's yes share before and after, changed and unreadable votes."""
    shares = _shares(tables)
    changes = vote_changes(tables).groupby("conversation_id")["changed"].sum()
    votes = ballots(tables)
    unreadable = (votes["status"] != "ok").groupby(votes["conversation_id"]).sum()
    found = {}
    for cid in tables.done_conversations()["conversation_id"].astype(str):
        points = sorted((r, v) for (c, r), v in shares.items() if c == cid)
        found[cid] = Row(
            {
                "yes_before": points[0][1] if points and points[0][0] == 0 else None,
                "yes_after": points[-1][1] if points else None,
                "changed": int(changes.get(cid, 0)),
                "unreadable": int(unreadable.get(cid, 0)),
            },
            badges=(Chip("changed minds", "accent"),) if changes.get(cid, 0) else (),
        )
    return found


def page(tables: bc.RunTables, conversation_id: str, options: ViewOptions) -> Page:
    """Every agent's ballot at every checkpoint, the yes share over checkpoints, the talk."""
    events = tables.events_of(done=False)
    events = events[events["conversation_id"] == conversation_id]
    cast = events[(events["kind"] == "probe") & (events["name"] == "vote")]
    checkpoints = sorted({int(r) for r in cast["round"]})
    agents = list(dict.fromkeys(str(a) for a in cast["agent"]))
    at = {(str(a), int(r)): (int(s), str(v), str(st)) for a, r, s, v, st in
          zip(cast["agent"], cast["round"], cast["seq"], cast["value"],
              cast["status"], strict=True)}  # fmt: skip
    grid = []
    for agent in agents:
        cells = [Cell((agent,), header=True)]
        for checkpoint in checkpoints:
            found = at.get((agent, checkpoint))
            if found is None:
                cells.append(Cell())
                continue
            seq, vote, status = found
            label = vote.strip('"') if status == "ok" else f"unreadable ({status})"
            chip = Chip(label, TONE.get(label, "warning"), "vote")
            cells.append(Cell((EventRef(seq, (chip,), body=False),), data={"vote": label}))
        grid.append(TableRow(tuple(cells), data={"agent": agent}))
    head = (Cell(("agent",), header=True),
            *(Cell((f"checkpoint {c}",), header=True) for c in checkpoints))  # fmt: skip
    shares = sorted((r, v) for (c, r), v in _shares(tables).items() if c == conversation_id)
    talk = events[events["kind"] == "message"]["seq"]
    return Page(
        (
            Table(
                "Ballots",
                head,
                tuple(grid),
                note="Checkpoint 0 is before the discussion; click a ballot to see its prompt.",
                name="ballots",
            ),
            Plot(
                "Yes share",
                (Series("yes", tuple((float(r), v) for r, v in shares)),),
                xlabel="checkpoint",
                ylabel="share of readable ballots saying yes",
            ),
            Timeline("Discussion", tuple(int(s) for s in talk)),
        )
    )


VIEW = View(columns=COLUMNS, rows=rows, page=page)
