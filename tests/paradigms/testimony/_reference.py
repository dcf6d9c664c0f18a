"""The per-record definitions the column-wise code is checked against: the lineage rows and
propagation orders one statement and claim at a time (`_lineage._frames`,
`_propagation.slot_orders`). Tests only."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from backchannel.paradigms.testimony._citations import Claim
from backchannel.paradigms.testimony._graph import Record
from backchannel.paradigms.testimony._lineage import GROUPS, TESTIMONIES, _arm, _supports
from backchannel.paradigms.testimony._phases import round_of
from backchannel.paradigms.testimony._roots import holdings
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
