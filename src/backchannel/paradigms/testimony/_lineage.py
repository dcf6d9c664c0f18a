"""Evidence-lineage metrics (definitions in docs/paradigms/testimony.md, "Evidence lineage").

Analysed statements: the R1..RK statements of the three members (the roles other than key and
second-key); observers' statements (O1..OK) are reported as a group of their own. Per testimony
(key, second-key): citation rates (direct, through a carrier, either), adoption, claim counts
and propagation order. Per member and round: the evidence roots it holds, their transitions,
the votes of both-root holders and the order of single-root holders.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import RunTables
from backchannel.paradigms.testimony._cells import Cells, with_cell
from backchannel.paradigms.testimony._citations import Claim
from backchannel.paradigms.testimony._graph import Record, citation_judges, records
from backchannel.paradigms.testimony._phases import round_of
from backchannel.paradigms.testimony._propagation import (
    statement_orders,
)
from backchannel.paradigms.testimony._roots import STATES, holdings
from backchannel.paradigms.testimony._votes import VOTE_KINDS, vote_kind

TESTIMONIES = ("key", "second_key")
ARM = ["model", "condition", "intervention"]
GROUPS = {"member": "members", "observer": "observers"}


def _model_label(meta: dict[str, Any]) -> str:
    models = sorted({a["model"] for a in meta.get("agents", []) if a["role"] != "observer"})
    return "+".join(models)


def _arm(meta: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": _model_label(meta),
        "condition": meta["condition"],
        "intervention": meta["intervention"],
    }


def _supports(meta: dict[str, Any]) -> dict[str, str | None]:
    messages = (meta.get("environment") or {}).get("messages", [])
    return {m["sender"]: (m.get("asserts") or {}).get("supports") for m in messages}


def _carried(record: Record) -> dict[tuple[str, str], dict[str, int]]:
    return statement_orders(
        [((s.agent, s.phase), s.extraction.claims) for s in record.statements if s.extraction]
    )


STATEMENT_COLUMNS = (
    *ARM,
    "conversation_id",
    "group",
    "agent",
    "phase",
    "testimony",
    "extracted",
    "status",
    "direct",
    "carrier",
    "cites",
    # The study's adoption: a claim carrying the testimony (directly or through statements
    # rooted in it) that supports its endpoint.
    "adopts",
    # Any claim supporting the same endpoint, cited or not.
    "supports_endpoint",
    "claims_adopting",
    "claims_direct",
    "claims_carrier",
    "order",
)


def statement_rows(
    record: Record, carried: dict[tuple[str, str], dict[str, int]] | None = None
) -> list[tuple[Any, ...]]:
    """One row (`STATEMENT_COLUMNS`) per analysed or observer statement and testimony (key,
    second_key); `carried` is the record's propagation orders, when already worked out."""
    meta = record.meta
    carried = _carried(record) if carried is None else carried
    supports = _supports(meta)
    arm = tuple(_arm(meta).values())
    senders = [(t, meta[t]) for t in TESTIMONIES]
    endpoints = {sender: supports.get(sender) for _, sender in senders}
    rows = []
    for s in record.statements:
        group = GROUPS.get(s.role)
        if group is None or (group == "members") != s.phase.startswith("R"):
            continue
        claims = s.extraction.claims if s.extraction else ()
        mine = carried.get((s.agent, s.phase), {})
        tally = tally_claims(claims, endpoints, carried)
        backed = {c.supports for c in claims}
        for testimony, sender in senders:
            endpoint = endpoints[sender]
            direct_claims, carrier_claims, adopting_claims = tally[sender]
            rows.append(
                (
                    *arm,
                    record.conversation_id,
                    group,
                    s.agent,
                    s.phase,
                    testimony,
                    s.extraction is not None,
                    s.status,
                    direct_claims > 0,
                    carrier_claims > 0,
                    sender in mine,
                    adopting_claims > 0,
                    endpoint is not None and endpoint in backed,
                    adopting_claims,
                    direct_claims,
                    carrier_claims,
                    mine.get(sender),
                )
            )
    return rows


def tally_claims(
    claims: Sequence[Claim],
    endpoints: dict[str, str | None],
    carried: dict[tuple[str, str], dict[str, int]],
) -> dict[str, list[int]]:
    """Per testimony sender, in one pass over a statement's claims: the claims citing it
    directly (`direct`), carrying it through an earlier statement (`through_carrier`), and
    carrying it while supporting its endpoint (`adopting`)."""
    tally = {sender: [0, 0, 0] for sender in endpoints}
    for claim in claims:
        if claim.kind == "testimony":
            found = tally.get(claim.source)
            if found is not None:
                found[0] += 1
                endpoint = endpoints[claim.source]
                found[2] += endpoint is not None and claim.supports == endpoint
            continue
        cited = carried.get((claim.source, claim.round or ""), {})
        for sender, found in tally.items():
            if sender in cited:
                found[1] += 1
                endpoint = endpoints[sender]
                found[2] += endpoint is not None and claim.supports == endpoint
    return tally


def citation_rates(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """Per arm, group, testimony and round: shares of extracted statements that cite the
    testimony directly, through a carrier, or either; that adopt it (a claim carrying it that
    supports its endpoint), also among the statements citing it; that support its endpoint in
    any claim (cited or not); claim counts; the mean propagation order of the statements that
    carry it."""
    result = []
    keys = [*ARM, "group", "testimony", "phase"]
    for values, group in rows.groupby(keys, sort=True):
        ok = group[group["extracted"]]
        n = len(ok)
        entry: dict[str, Any] = dict(zip(keys, values, strict=True))
        entry["statements"] = n
        entry["not_extracted"] = int(len(group) - n)
        for name, column in (
            ("direct_rate", "direct"),
            ("carrier_rate", "carrier"),
            ("citation_rate", "cites"),
            ("adoption_rate", "adopts"),
            ("endpoint_support_rate", "supports_endpoint"),
        ):
            entry[name] = float(ok[column].mean()) if n else float("nan")
        citing = ok[ok["cites"]]
        entry["citing"] = len(citing)
        entry["adoption_given_citation"] = (
            float(citing["adopts"].mean()) if len(citing) else float("nan")
        )
        entry["claims_adopting"] = int(ok["claims_adopting"].sum())
        entry["claims_direct"] = int(ok["claims_direct"].sum())
        entry["claims_carrier"] = int(ok["claims_carrier"].sum())
        orders = ok["order"].dropna()
        entry["carrying"] = len(orders)
        entry["mean_order"] = float(orders.mean()) if len(orders) else float("nan")
        result.append(entry)
    return result


MEMBER_COLUMNS = (
    *ARM,
    "conversation_id",
    "agent",
    "phase",
    "state",
    "order_true",
    "order_false",
    "vote",
    "false_root",
)


def member_rows(
    record: Record, carried: dict[tuple[str, str], dict[str, int]] | None = None
) -> list[tuple[Any, ...]]:
    """One row (`MEMBER_COLUMNS`) per member and round: its root state, the orders it holds
    them at, its vote; `carried` is the record's propagation orders, when already worked out."""
    meta = record.meta
    carried = _carried(record) if carried is None else carried
    rounds = int(meta["rounds"])
    true_root = meta["second_key"]
    false_root = meta["key"] if meta["condition"] == "C1" else None
    members = [a["name"] for a in meta["agents"] if a["role"] == "member"]
    arm = tuple(_arm(meta).values())
    rows = []
    for member in members:
        by_round = [carried.get((member, f"R{k}"), {}) for k in range(1, rounds + 1)]
        for k, (state, t, f) in enumerate(holdings(by_round, true_root, false_root), start=1):
            number = round_of(f"R{k}")
            vote = vote_kind(record.votes.get((member, number)), meta["endpoint"], meta["decoy"])
            rows.append(
                (
                    *arm,
                    record.conversation_id,
                    member,
                    f"R{k}",
                    state,
                    t,
                    f,
                    vote,
                    false_root is not None,
                )
            )
    return rows


def _frames(found: list[Record]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The statement rows and member rows of every record (each record's propagation orders
    worked out once for both); a frame with no rows has no columns."""
    statements: list[tuple[Any, ...]] = []
    members: list[tuple[Any, ...]] = []
    for record in found:
        carried = _carried(record)
        statements += statement_rows(record, carried)
        members += member_rows(record, carried)
    return _frame(statements, STATEMENT_COLUMNS), _frame(members, MEMBER_COLUMNS)


def _frame(rows: list[tuple[Any, ...]], columns: tuple[str, ...]) -> pd.DataFrame:
    if not rows:
        return pd.DataFrame([])
    return pd.DataFrame.from_records(rows, columns=list(columns))


def root_states(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """Per arm and round: how many members hold no root, the true only, the false only, both."""
    result = []
    for values, group in rows.groupby([*ARM, "phase"], sort=True):
        entry: dict[str, Any] = dict(zip([*ARM, "phase"], values, strict=True))
        entry["members"] = len(group)
        for state in STATES:
            entry[state] = int((group["state"] == state).sum())
        result.append(entry)
    return result


def state_transitions(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """Per arm: counts of each state change from one round to the next (R1 -> R2 -> R3)."""
    result = []
    for values, group in rows.groupby(ARM, sort=True):
        for (k, before, after), count in sorted(frame_transitions(group).items()):
            result.append(
                {
                    **dict(zip(ARM, values, strict=True)),
                    "from_phase": f"R{k + 1}",
                    "to_phase": f"R{k + 2}",
                    "from_state": before,
                    "to_state": after,
                    "count": count,
                }
            )
    return result


def frame_transitions(rows: pd.DataFrame) -> dict[tuple[int, str, str], int]:
    """`transitions` of every member's path of states (its rows in round order), counted over
    the whole frame at once: each row against the member's next one."""
    codes, phases = pd.factorize(rows["phase"])
    paths = pd.DataFrame(
        {
            "conversation_id": rows["conversation_id"].to_numpy(),
            "agent": rows["agent"].to_numpy(),
            "number": np.array([round_of(p) for p in phases], dtype=np.int64)[codes],
            "state": rows["state"].to_numpy(),
        }
    ).sort_values(["conversation_id", "agent", "number"], kind="stable")
    members = paths.groupby(["conversation_id", "agent"], sort=False)
    steps = paths.assign(k=members.cumcount(), after=members["state"].shift(-1))
    steps = steps[members["number"].shift(-1).notna()]
    counts = steps.groupby(["k", "state", "after"], sort=False).size().reset_index(name="n")
    return {
        (int(k), str(b), str(a)): int(n)
        for k, b, a, n in zip(
            *(counts[c].tolist() for c in ("k", "state", "after", "n")), strict=True
        )
    }


def pickups(transition_rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per arm and step: the share of true-only holders that hold the false root in the next
    round, and of false-only holders that pick up the true root."""
    frame = pd.DataFrame(list(transition_rows))
    if frame.empty:
        return []
    result = []
    for values, group in frame.groupby([*ARM, "from_phase", "to_phase"], sort=True):
        base = dict(zip([*ARM, "from_phase", "to_phase"], values, strict=True))
        for start, gained in (
            ("true_only", ("false_only", "both")),
            ("false_only", ("true_only", "both")),
        ):
            mine = group[group["from_state"] == start]
            n = int(mine["count"].sum())
            hit = int(mine[mine["to_state"].isin(gained)]["count"].sum())
            result.append(
                {
                    **base,
                    "from_state": start,
                    "holders": n,
                    "picked_up": hit,
                    "share": hit / n if n else float("nan"),
                }
            )
    return result


def both_root_votes(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """Per arm and round: the votes of members that hold both roots."""
    result = []
    both = rows[rows["state"] == "both"]
    for values, group in both.groupby([*ARM, "phase"], sort=True):
        entry: dict[str, Any] = dict(zip([*ARM, "phase"], values, strict=True))
        entry["holders"] = len(group)
        for kind in VOTE_KINDS:
            entry[f"{kind}_share"] = float((group["vote"] == kind).mean())
        result.append(entry)
    return result


def single_root_orders(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """Per arm, root and round: the mean propagation order at which single-root holders hold it."""
    result = []
    for root, state, column in (
        ("true", "true_only", "order_true"),
        ("false", "false_only", "order_false"),
    ):
        mine = rows[rows["state"] == state]
        for values, group in mine.groupby([*ARM, "phase"], sort=True):
            result.append(
                {
                    **dict(zip([*ARM, "phase"], values, strict=True)),
                    "root": root,
                    "holders": len(group),
                    "mean_order": float(group[column].astype(float).mean()),
                }
            )
    return result


def extraction_summary(found: list[Record]) -> dict[str, Any]:
    """How many statements have claims, failed extraction, or no label; invalid citations."""
    statements = [s for r in found for s in r.statements]
    by_status: dict[str, int] = {}
    invalid: dict[str, int] = {}
    claims = 0
    for s in statements:
        by_status[s.status] = by_status.get(s.status, 0) + 1
        if s.extraction:
            claims += len(s.extraction.claims)
            for bad in s.extraction.invalid:
                invalid[bad.reason] = invalid.get(bad.reason, 0) + 1
    return {
        "statements": len(statements),
        "by_status": dict(sorted(by_status.items())),
        "claims": claims,
        "invalid_citations": dict(sorted(invalid.items())),
    }


def judge_lineage(tables: RunTables, judge: str, cells: Cells | None = None) -> dict[str, Any]:
    """Every lineage measure under one citation judge, per cell of the factors beyond the arm
    (`cells`); the extraction summary counts the whole run."""
    cells = cells or Cells()
    found = records(tables, judge)
    statements, members = _frames(found)
    result: dict[str, Any] = {
        "extraction": extraction_summary(found),
        "citation": [],
        "root_states": [],
        "transitions": [],
        "pickups": [],
        "both_root_votes": [],
        "single_root_order": [],
    }

    def add(name: str, rows: list[dict[str, Any]], cell: dict[str, Any]) -> None:
        result[name] += [with_cell(row, cell, "intervention") for row in rows]

    for cell, part in cells.split(statements) if len(statements) else []:
        add("citation", citation_rates(part), cell)
    for cell, part in cells.split(members) if len(members) else []:
        moved = state_transitions(part)
        add("root_states", root_states(part), cell)
        add("transitions", moved, cell)
        add("pickups", pickups(moved), cell)
        add("both_root_votes", both_root_votes(part), cell)
        add("single_root_order", single_root_orders(part), cell)
    return result


def lineage_metrics(tables: RunTables, cells: Cells | None = None) -> dict[str, Any]:
    """The lineage measures of every citation judge of the run (none: an empty mapping)."""
    judges = citation_judges(tables)
    return {"judges": judges, "by_judge": {j: judge_lineage(tables, j, cells) for j in judges}}
