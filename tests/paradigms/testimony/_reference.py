"""The per-record definitions the column-wise code is checked against: the records one event
at a time (`_graph.records`), the lineage rows and propagation orders one statement and claim
at a time (`_lineage._frames`, `_propagation.slot_orders`). Tests only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from backchannel.analysis import RunTables, decode_json
from backchannel.paradigms._stance_rows import skipped_row
from backchannel.paradigms.testimony._citations import Claim, Extraction
from backchannel.paradigms.testimony._graph import READ, Record, Statement
from backchannel.paradigms.testimony._lineage import GROUPS, TESTIMONIES, _arm, _supports
from backchannel.paradigms.testimony._phases import label_of, round_of
from backchannel.paradigms.testimony._roots import holdings
from backchannel.paradigms.testimony._stances import (
    AT_DECOY,
    FAILED_EXTRACTION,
    NO_PROBE,
    NO_START,
    START,
    UNKNOWN,
    UNLABELLED,
    UNREADABLE,
    UNREADABLE_START,
)
from backchannel.paradigms.testimony._votes import vote_kind

Key = tuple[str, str]  # (agent, round label)


def claim_orders(claim: Claim, carried: Mapping[Key, Mapping[str, int]]) -> dict[str, int]:
    """The testimonies (by sender) one claim carries, with their orders."""
    if claim.kind == "testimony":
        return {claim.source: 1}
    cited = carried.get((claim.source, claim.round or ""), {})
    return {sender: order + 1 for sender, order in cited.items()}


def statement_orders(
    statements: Sequence[tuple[Key, Sequence[Claim]]],
) -> dict[Key, dict[str, int]]:
    """For each statement, the testimonies it carries and at which order.

    Raises ValueError on a claim citing a statement that is not earlier (such claims are
    invalid and must have been set aside by the checks in `_citations`).
    """
    carried: dict[Key, dict[str, int]] = {}
    for key, claims in sorted(statements, key=lambda s: round_of(s[0][1])):
        orders: dict[str, int] = {}
        for claim in claims:
            if claim.kind == "statement" and round_of(claim.round or "") >= round_of(key[1]):
                raise ValueError(
                    f"{key[0]}@{key[1]} cites {claim.source}@{claim.round}, not earlier"
                )
            for sender, order in claim_orders(claim, carried).items():
                orders[sender] = max(order, orders.get(sender, 0))
        carried[key] = orders
    return carried


def _carried(record: Record) -> dict[tuple[str, str], dict[str, int]]:
    return statement_orders(
        [((s.agent, s.phase), s.extraction.claims) for s in record.statements if s.extraction]
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


def records_by_event(tables: RunTables, judge: str) -> list[Record]:
    """`_graph.records`, one event at a time: the conversations in stored order, each event
    appended to its own record, then each record's statements sorted by (round, seq)."""
    done = tables.done_conversations()
    found: list[Record] = []
    by_id: dict[str, list[Record]] = {}
    run_ids = done["run_id"].tolist() if "run_id" in done.columns else [""] * len(done)
    for run_id, cid, meta in zip(
        run_ids, done["conversation_id"].tolist(), done["meta"].tolist(), strict=True
    ):
        if "endpoint" not in meta:
            continue
        record = Record(str(run_id), str(cid), meta, {}, [])
        found.append(record)
        by_id.setdefault(record.conversation_id, []).append(record)
    events = tables.core_events
    kind, name = events["kind"], events["name"]
    mask = pd.Series(False, index=events.index)
    for k, n in READ:
        mask |= (kind == k) & (name == n)
    chosen = events[mask & tables.done_events()]
    labels = _labels(tables.labels_for(judge))
    extractions: dict[str, Extraction] = {}  # one parse per distinct label text
    decoded: dict[Any, Any] = {}  # one decoding per distinct vote value
    columns = ("conversation_id", "kind", "name", "seq", "agent", "role", "round", "text")
    for cid, k, n, seq, agent, role, number, said, value, status in zip(
        *(chosen[c].tolist() for c in columns),
        chosen["value"].tolist(),
        chosen["status"].tolist(),
        strict=True,
    ):
        for record in by_id.get(str(cid), ()):
            seq = int(seq)
            if n == "testimony":
                record.testimony[str(agent)] = seq
            elif k == "message":
                _statement(record, seq, agent, role, int(number), said, labels, extractions)
            else:
                if status == "ok" and value not in decoded:
                    decoded[value] = decode_json(value)
                record.votes[(str(agent), int(number))] = decoded[value] if status == "ok" else None
    for record in found:
        record.statements.sort(key=lambda s: (s.number, s.seq))
    return found


def _labels(labels: pd.DataFrame) -> dict[tuple[str, int], tuple[Any, Any, Any]]:
    """(status, label, text) of each labelled event, by conversation and event seq."""
    columns = ("conversation_id", "event_seq", "status", "label", "text")
    return {
        (str(cid), int(seq)): (status, label, text)
        for cid, seq, status, label, text in zip(
            *(labels[c].tolist() for c in columns), strict=True
        )
    }


def _statement(
    record: Record,
    seq: int,
    agent: Any,
    role: Any,
    number: int,
    said: Any,
    labels: dict[tuple[str, int], tuple[Any, Any, Any]],
    extractions: dict[str, Extraction],
) -> None:
    label = labels.get((record.conversation_id, seq))
    extraction, status, text = None, "not_labelled", ""
    if label is not None:
        status, text = str(label[0]), str(label[2] or "")
        if status == "ok" and isinstance(label[1], str):
            extraction = extractions.get(label[1])
            if extraction is None:
                extraction = extractions[label[1]] = Extraction.from_label(label[1])
    record.statements.append(
        Statement(
            seq,
            str(agent),
            str(role),
            label_of(number),
            number,
            extraction,
            status,
            text,
            str(said or ""),
        )
    )


def _place(vote: Any, endpoint: str, decoy: str) -> str | None:
    """A vote's place in the stance pairs (a container or UNKNOWN), None when there is no
    readable vote, one vote at a time."""
    _, value, status = vote
    kind = vote_kind(value, endpoint, decoy, str(status))
    if kind in ("truncated", "failed") or status != "ok":
        return None
    return str(value)


def stance_rows(
    record: Record,
    votes: dict[tuple[str, str, int], Any],
    probes: dict[tuple[str, int], Any],
) -> list[dict[str, Any]]:
    """The stance pairs of one record, a statement at a time (`_stances._rows` does all
    records a column at a time)."""
    cid, meta = record.conversation_id, record.meta
    endpoint, decoy = str(meta["endpoint"]), str(meta["decoy"])
    rows = []
    # Each agent's start vote and its place, read once per agent rather than per statement.
    starts: dict[str, tuple[Any, str | None]] = {}
    for s in record.statements:
        probe = probes.get((cid, s.seq)) or votes.get((cid, s.agent, s.number))
        base = {
            "conversation_id": cid,
            "agent": s.agent,
            "role": s.role,
            "round": s.number,
            "turn_seq": s.seq,
            "probe_seq": None if probe is None else probe[0],
        }
        if s.agent not in starts:
            start = votes.get((cid, s.agent, START))
            starts[s.agent] = (start, None if start is None else _place(start, endpoint, decoy))
        start, start_place = starts[s.agent]
        if s.extraction is None:
            reason = UNLABELLED if s.status == "not_labelled" else FAILED_EXTRACTION
            rows.append(skipped_row(base, reason))
        elif start is None:
            rows.append(skipped_row(base, NO_START))
        elif start_place is None:
            rows.append(skipped_row(base, UNREADABLE_START))
        elif start_place == decoy:
            rows.append(skipped_row(base, AT_DECOY))
        elif probe is None:
            rows.append(skipped_row(base, NO_PROBE))
        elif (place := _place(probe, endpoint, decoy)) is None:
            rows.append(skipped_row(base, UNREADABLE))
        else:
            backed = {c.supports for c in s.extraction.claims if c.supports is not None}
            rows.append(
                {
                    **base,
                    "public_moved": decoy in backed,
                    "private_moved": place == decoy,
                    # Same position: the statement backs the voted place, or backs no place
                    # when the vote names none.
                    "agree": not backed if place == UNKNOWN else place in backed,
                    "skipped": None,
                }
            )
    return rows
