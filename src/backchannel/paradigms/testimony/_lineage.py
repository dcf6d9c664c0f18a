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
from backchannel.paradigms.testimony._graph import Record, citation_judges, records
from backchannel.paradigms.testimony._phases import round_of
from backchannel.paradigms.testimony._propagation import slot_orders
from backchannel.paradigms.testimony._roots import STATES
from backchannel.paradigms.testimony._votes import VOTE_KINDS

TESTIMONIES = ("key", "second_key")
ARM = ["model", "condition", "intervention"]
GROUPS = {"member": "members", "observer": "observers"}


def _model_label(meta: dict[str, Any]) -> str:
    models = sorted({a["model"] for a in meta.get("agents", []) if a["role"] != "observer"})
    return "+".join(models)


def _arm(meta: dict[str, Any], model: str | None = None) -> dict[str, Any]:
    """The conversation's arm (`model`: its model label, when already worked out)."""
    return {
        "model": _model_label(meta) if model is None else model,
        "condition": meta["condition"],
        "intervention": meta["intervention"],
    }


def _supports(meta: dict[str, Any]) -> dict[str, str | None]:
    messages = (meta.get("environment") or {}).get("messages", [])
    return {m["sender"]: (m.get("asserts") or {}).get("supports") for m in messages}


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


def _frames(found: list[Record]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One row per analysed or observer statement and testimony (`STATEMENT_COLUMNS`) and one
    per member and round (`MEMBER_COLUMNS`) of every record, worked out a column at a time: the
    propagation orders a round at a time over all records at once; a frame with no rows has no
    columns. The per-record definitions they match: tests/paradigms/testimony/_reference.py."""
    table = _Table(found)
    return (
        _frame(table.statement_columns(), STATEMENT_COLUMNS),
        _frame(table.member_columns(), MEMBER_COLUMNS),
    )


def _frame(columns: dict[str, Any], names: tuple[str, ...]) -> pd.DataFrame:
    if not len(columns["conversation_id"]):
        return pd.DataFrame([])
    return pd.DataFrame({name: columns[name] for name in names})


def _objects(values: Sequence[Any]) -> np.ndarray:
    """`values` (texts, None) as an object array, each kept as it is."""
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def _factorize(*parts: Sequence[Any]) -> tuple[list[np.ndarray], np.ndarray]:
    """Each part's values as codes into one codebook of them all (None: -1), and the codebook."""
    codes, uniques = pd.factorize(np.concatenate([_objects(p) for p in parts]))
    bounds = np.cumsum([len(p) for p in parts])[:-1]
    return [c.astype(np.int64) for c in np.split(codes, bounds)], _objects(list(uniques))


def _texts(uniques: np.ndarray, codes: np.ndarray) -> Any:
    """A text column of codes into `uniques` (each distinct text converted once)."""
    return pd.array(list(uniques), dtype="str").take(codes)


def _number(label: str) -> int:
    """`round_of`, -1 for a label that is no round (it is never compared)."""
    try:
        return round_of(label)
    except (ValueError, IndexError):
        return -1


class _Table:
    """Every record's statements and claims as columns, and the order at which each slot
    (conversation, agent, round label) carries each testimony."""

    def __init__(self, found: list[Record]) -> None:
        self.found = found
        # Per record, typed as rows of them would be.
        # Conversations that stored the same meta share its agents list: one label each.
        labels: dict[int, str] = {}
        for r in found:
            if id(r.meta.get("agents")) not in labels:
                labels[id(r.meta.get("agents"))] = _model_label(r.meta)
        self.arm = pd.DataFrame.from_records(
            [tuple(_arm(r.meta, labels[id(r.meta.get("agents"))]).values()) for r in found],
            columns=ARM,
        )
        self.cid = pd.array([r.conversation_id for r in found], dtype="str")
        by_environment: dict[int, dict[str, str | None]] = {}  # shared by equal meta
        for r in found:
            if id(r.meta.get("environment")) not in by_environment:
                by_environment[id(r.meta.get("environment"))] = _supports(r.meta)
        sender = {t: [r.meta[t] for r in found] for t in TESTIMONIES}
        endpoint = {
            t: [
                by_environment[id(r.meta.get("environment"))].get(s)
                for r, s in zip(found, sender[t], strict=True)
            ]
            for t in TESTIMONIES
        }
        statements = [s for r in found for s in r.statements]
        lengths = np.array([len(r.statements) for r in found], dtype=np.int64)
        self.rec = np.repeat(np.arange(len(found), dtype=np.int64), lengths)
        self.role = [s.role for s in statements]
        self.status = [s.status for s in statements]
        # Each distinct extraction (shared objects for equal labels) has its claims read once.
        extractions = [s.extraction for s in statements]
        index: dict[int, int] = {}
        which = np.array([index.setdefault(id(e), len(index)) for e in extractions], dtype=np.int64)
        distinct = list({id(e): e for e in extractions}.values())
        self.extracted = which != index.get(id(None), -1)
        claims = [c for e in distinct if e is not None for c in e.claims]
        sizes = np.array([len(e.claims) if e else 0 for e in distinct], dtype=np.int64)
        n = sizes[which]
        self.claim_statement = np.repeat(np.arange(len(statements), dtype=np.int64), n)
        row = np.repeat((np.cumsum(sizes) - sizes)[which] - (np.cumsum(n) - n), n)
        row += np.arange(len(row), dtype=np.int64)
        self.testimony = np.array([c.kind == "testimony" for c in claims], dtype=bool)[row]
        self.rounds = [int(r.meta["rounds"]) for r in found]
        members = [[a["name"] for a in r.meta["agents"] if a["role"] == "member"] for r in found]
        self.members = members
        member_names = [m for ms in members for m in ms]
        most = max(self.rounds, default=0)
        (agent, source, key, second, member), self.names = _factorize(
            [s.agent for s in statements],
            [c.source for c in claims],
            sender["key"],
            sender["second_key"],
            member_names,
        )
        self.agent = agent
        self.member_agent = member
        self.sender = {"key": key, "second_key": second}
        self.source = source[row]
        (phase, cited_round, member_phase), self.labels = _factorize(
            [s.phase for s in statements],
            [c.round or "" for c in claims],
            [f"R{k}" for k in range(1, most + 1)],
        )
        self.phase = phase
        self.member_phase = member_phase
        (supports, key_end, second_end), _ = _factorize(
            [c.supports for c in claims], endpoint["key"], endpoint["second_key"]
        )
        self.supports = supports[row]
        self.endpoint = {"key": key_end, "second_key": second_end}
        numbers = np.array([_number(label) for label in self.labels], dtype=np.int64)
        self.number = numbers[phase]
        self.claim_rec = self.rec[self.claim_statement]
        cited_label = cited_round[row]
        late = ~self.testimony & (numbers[cited_label] >= self.number[self.claim_statement])
        late |= ~self.testimony & (numbers[cited_label] < 0)
        if late.any():  # claims must cite earlier rounds only
            first = int(np.flatnonzero(late)[0])
            at, bad = int(self.claim_statement[first]), claims[int(row[first])]
            round_of(bad.round or "")  # a label that is no round raises its own error
            raise ValueError(
                f"{statements[at].agent}@{statements[at].phase} cites "
                f"{bad.source}@{bad.round}, not earlier"
            )
        # Slots: one per distinct (record, agent, round label) of the statements.
        self.width = (len(self.names) + 1, len(self.labels) + 1)
        self.slots, self.slot = np.unique(self._key(self.rec, agent, phase), return_inverse=True)
        self.cited = np.where(
            self.testimony, -1, self.lookup(self.claim_rec, self.source, cited_label)
        )
        holders = np.flatnonzero(self.extracted)
        self.carried = {}
        for t in TESTIMONIES:
            direct = self.testimony & (self.source == self.sender[t][self.claim_rec])
            orders = slot_orders(
                self.number[holders],
                self.slot[holders],
                np.searchsorted(holders, self.claim_statement),
                direct,
                self.cited,
                len(self.slots),
            )
            self.carried[t] = np.append(orders, 0)  # the last one: no slot (-1)

    def _key(self, rec: np.ndarray, agent: np.ndarray, label: np.ndarray) -> np.ndarray:
        names, labels = self.width
        return (rec * names + agent + 1) * labels + label + 1

    def lookup(self, rec: np.ndarray, agent: np.ndarray, label: np.ndarray) -> np.ndarray:
        """The slots of (record, agent, round label) codes; -1 where no statement has one."""
        keys = self._key(rec, agent, label)
        if not len(self.slots):
            return np.full(len(keys), -1, dtype=np.int64)
        at = np.minimum(np.searchsorted(self.slots, keys), len(self.slots) - 1)
        return np.where(self.slots[at] == keys, at, -1)

    def _arm_columns(self, rec: np.ndarray) -> dict[str, Any]:
        return {name: self.arm[name].array.take(rec) for name in ARM}

    def statement_columns(self) -> dict[str, Any]:
        """`STATEMENT_COLUMNS` of the analysed and observer statements, two rows (key,
        second_key) per statement."""
        n = len(self.rec)
        role_code, roles = pd.factorize(_objects(self.role))
        group = _objects([GROUPS.get(r) for r in roles])
        spoken = np.array([str(p).startswith("R") for p in self.labels], dtype=bool)
        in_group = np.array([g is not None for g in group], dtype=bool)
        members = group == "members"
        kept = np.flatnonzero(in_group[role_code] & (members[role_code] == spoken[self.phase]))
        twice = np.repeat(kept, 2)
        rec = self.rec[twice]
        status_code, statuses = pd.factorize(_objects(self.status))
        columns = self._arm_columns(rec)
        columns["conversation_id"] = self.cid.take(rec)
        columns["group"] = _texts(group, role_code[twice])
        columns["agent"] = _texts(self.names, self.agent[twice])
        columns["phase"] = _texts(self.labels, self.phase[twice])
        columns["testimony"] = _texts(_objects(TESTIMONIES), np.tile([0, 1], len(kept)))
        columns["extracted"] = self.extracted[twice]
        columns["status"] = _texts(_objects(list(statuses)), status_code[twice])
        at = self.claim_statement
        per: dict[str, list[np.ndarray]] = {}
        for t in TESTIMONIES:
            carried = self.carried[t]
            direct = self.testimony & (self.source == self.sender[t][self.claim_rec])
            through = ~self.testimony & (carried[self.cited] > 0)
            endpoint = self.endpoint[t][self.claim_rec]
            backs = (endpoint >= 0) & (self.supports == endpoint)
            mine = carried[self.slot][kept]

            def count(mask: np.ndarray) -> np.ndarray:
                return np.bincount(at[mask], minlength=n)[kept].astype(np.int64)

            found = {
                "claims_direct": count(direct),
                "claims_carrier": count(through),
                "claims_adopting": count((direct | through) & backs),
                "supports_endpoint": count(backs) > 0,
                "cites": mine > 0,
                "order": np.where(mine > 0, mine, np.nan),
            }
            for name, values in found.items():
                per.setdefault(name, []).append(values)
        for name, (key, second) in per.items():
            columns[name] = np.stack([key, second], axis=1).ravel()
        columns["direct"] = columns["claims_direct"] > 0
        columns["carrier"] = columns["claims_carrier"] > 0
        columns["adopts"] = columns["claims_adopting"] > 0
        return columns

    def member_columns(self) -> dict[str, Any]:
        """`MEMBER_COLUMNS`: per member and round, its root state (what its statements up to
        the round carry, each root at the order of the latest one carrying it) and its vote."""
        numbers = [round_of(f"R{k}") for k in range(1, max(self.rounds, default=0) + 1)]
        # Rows (record, member, round), rounds fastest, worked out as arrays.
        sizes = np.array([len(ms) for ms in self.members], dtype=np.int64)
        rounds = np.array(self.rounds, dtype=np.int64)
        per = sizes * rounds
        rec = np.repeat(np.arange(len(per), dtype=np.int64), per)
        within = np.arange(len(rec), dtype=np.int64) - np.repeat(np.cumsum(per) - per, per)
        member, step = np.divmod(within, rounds[rec]) if len(rec) else (within, within)
        agent = self.member_agent[(np.cumsum(sizes) - sizes)[rec] + member]
        votes = _objects(
            [
                self.found[i].votes.get((self.members[i][m], numbers[k]))
                for i, m, k in zip(rec.tolist(), member.tolist(), step.tolist(), strict=True)
            ]
        )
        slots = self.lookup(rec, agent, self.member_phase[step])
        condition = np.array([r.meta["condition"] == "C1" for r in self.found], dtype=bool)
        held = []
        for t, only in (("second_key", None), ("key", condition)):
            order = self.carried[t][slots]
            if only is not None:
                order = np.where(only[rec], order, 0)
            # The latest order so far: each row reaches back to its member's last carrying row.
            marks = np.where((order > 0) | (step == 0), np.arange(len(order)), 0)
            held.append(order[np.maximum.accumulate(marks)] if len(order) else order)
        true, false = held
        columns = self._arm_columns(rec)
        columns["conversation_id"] = self.cid.take(rec)
        columns["agent"] = _texts(self.names, agent)
        columns["phase"] = _texts(self.labels, self.member_phase[step])
        columns["state"] = _texts(_objects(STATES), (true > 0) + 2 * (false > 0).astype(int))
        columns["order_true"] = np.where(true > 0, true, np.nan)
        columns["order_false"] = np.where(false > 0, false, np.nan)
        columns["vote"] = _texts(_objects(VOTE_KINDS), self._vote_kinds(rec, votes))
        columns["false_root"] = condition[rec]
        return columns

    def _vote_kinds(self, rec: np.ndarray, votes: np.ndarray) -> np.ndarray:
        """`vote_kind` of each row's vote (a decoded value, None: none), as VOTE_KINDS codes."""
        endpoint = _objects([r.meta["endpoint"] for r in self.found])[rec]
        decoy = _objects([r.meta["decoy"] for r in self.found])[rec]
        text = np.array([isinstance(v, str) for v in votes], dtype=bool)
        kinds = np.select(
            [
                ~text,
                text & (votes == endpoint),
                text & (votes == decoy),
                text & (votes == "UNKNOWN"),
            ],
            [VOTE_KINDS.index(k) for k in ("failed", "true", "decoy", "unknown")],
            default=VOTE_KINDS.index("other"),
        )
        return kinds.astype(np.int64)


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
