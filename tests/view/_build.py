"""Hand-built runs for the viewer's tests, written through the run store's public API.

The main peer-pressure conversation has one adversary and three honest agents over two rounds;
its labels are chosen so that its figures are known by hand (see test_metrics.py). Texts,
names and the item carry XSS payloads that would change the page or call 127.0.0.1.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from backchannel.backends import UsageMeter
from backchannel.engine import ConversationSpec, Event, Item, Label
from backchannel.store import RunStore

JUDGE = "j"
CANARY = "http://127.0.0.1:9/pwned"
P_SCRIPT = f"<script>document.title='pwned';fetch('{CANARY}-script')</script>"
P_IMG = f"<img src=x onerror=\"document.title='pwned';fetch('{CANARY}-img')\">"
P_LINK = "<a href=\"javascript:document.title='pwned'\">click me</a>"
P_RTL = "safe \u202etxt.exe\u202c end"
P_NUL = "before\x00after"
ADVERSARY = f"<img src=x onerror=fetch('{CANARY}-name')>"
ITEM = "<svg onload=document.title='changed'>"
HONEST = ("Bob", "Carol", "Dave")

# (round, agent) -> (text, stance) of public turns; checkpoint -> agent -> (label, status).
TURNS: dict[tuple[int, str], tuple[str, str]] = {
    (1, ADVERSARY): (P_IMG, "endorse"),
    (1, "Bob"): (P_SCRIPT, "hedge"),
    (1, "Carol"): (P_LINK, "ignore"),
    (1, "Dave"): ("Dave says round one", "endorse"),
    (2, ADVERSARY): ("adversary round two", "endorse"),
    (2, "Bob"): (P_RTL, "ignore"),
    (2, "Carol"): ("Carol says round two", "reject"),
    (2, "Dave"): (P_NUL, "hedge"),
}
ANSWERS: dict[int, dict[str, tuple[str, str]]] = {
    0: {"Bob": ("true", "ok"), "Carol": ("true", "ok"), "Dave": ("manipulated", "ok")},
    1: {"Bob": ("manipulated", "ok"), "Carol": ("true", "ok"), "Dave": ("manipulated", "ok")},
    2: {
        "Bob": ("manipulated", "ok"),
        "Carol": ("true", "parse_failure"),
        "Dave": ("manipulated", "ok"),
    },
}


def manifest(
    paradigm: str = "peer_pressure", factors: dict[str, list[Any]] | None = None
) -> dict[str, Any]:
    factors = {"k": [0, 1]} if factors is None else factors
    return {
        "run_id": "view-test",
        "name": "view test",
        "paradigm": paradigm,
        "factors": list(factors),
        "config_resolved": {
            "factors": factors,
            "settings": {"judge": {"name": JUDGE}},
            "endpoints": [
                {
                    "models": "openai/*",
                    "base_url": "http://h/v1",
                    "api_key": "SECRET-KEY",
                    "api_key_env": "MY_KEY",
                }
            ],
        },
    }


def answer_text(agent: str, checkpoint: int) -> str:
    return f"private answer of {agent} at {checkpoint}"


def prompt_text(agent: str, seq: int) -> str:
    return f"PROMPT-MARKER {agent} {seq}"


def _call(
    seq: int,
    kind: str,
    name: str,
    round: int,
    turn: int | None,
    agent: str,
    role: str,
    channel: str,
    text: str,
    status: str = "ok",
) -> Event:
    return Event(
        seq,
        kind,
        name,
        round,
        turn,
        agent,
        role,
        channel,  # type: ignore[arg-type]
        text=text,
        status=status,
        model="sim",
        prompt_tokens=5,
        completion_tokens=3,
        meta={"prompt": [["system", f"You are {agent}"], ["user", prompt_text(agent, seq)]]},
        reasoning=reasoning_text(agent, seq),
    )


def reasoning_text(agent: str, seq: int) -> str:
    return f"REASONING-MARKER {agent} {seq} <b onmouseover=x>think</b>"


def peer_pressure_conversation(
    item: str = ITEM, k: int = 1
) -> tuple[ConversationSpec, list[Event], list[Label], dict[str, Any]]:
    cell = {"k": k}
    spec = ConversationSpec(
        f"k={k}/{item}/0", "peer_pressure", cell, f"k={k}", Item(item, {"question": P_SCRIPT}), 0, 5
    )
    events: list[Event] = [
        Event(
            0,
            "message",
            "opening",
            0,
            0,
            "moderator",
            "moderator",
            "public",
            text="Welcome " + P_LINK,
        )
    ]
    labels: list[Label] = []

    def probes(checkpoint: int) -> None:
        for agent in HONEST:
            label, status = ANSWERS[checkpoint][agent]
            seq = len(events)
            events.append(
                _call(
                    seq,
                    "probe",
                    "answer",
                    checkpoint,
                    None,
                    agent,
                    "honest",
                    "private",
                    answer_text(agent, checkpoint),
                )
            )
            labels.append(
                Label(
                    seq,
                    JUDGE,
                    label if status == "ok" else None,
                    status,
                    f"rationale {P_IMG}",
                    "sim",
                )
            )

    probes(0)
    for round_ in (1, 2):
        for turn, agent in enumerate((ADVERSARY, *HONEST)):
            text, stance = TURNS[(round_, agent)]
            seq = len(events)
            role = "adversary" if agent == ADVERSARY else "honest"
            events.append(_call(seq, "message", "turn", round_, turn, agent, role, "public", text))
            labels.append(Label(seq, JUDGE, stance, "ok", "stance rationale", "sim"))
        probes(round_)
    agents = [{"name": ADVERSARY, "role": "adversary"}] + [
        {"name": a, "role": "honest"} for a in HONEST
    ]
    return spec, events, labels, {"agents": agents, "adversaries": [ADVERSARY]}


def plain_conversation(
    item: str, k: int, *, text: str = "hello"
) -> tuple[ConversationSpec, list[Event], list[Label], dict[str, Any]]:
    spec = ConversationSpec(
        f"k={k}/{item}/0",
        "peer_pressure",
        {"k": k},
        f"k={k}",
        Item(item, {"question": f"question {item}"}),
        0,
        1,
    )
    events = [Event(0, "message", "turn", 1, 0, "Bob", "honest", "public", text=text, model="sim")]
    return spec, events, [], {"agents": [{"name": "Bob", "role": "honest"}], "adversaries": []}


def commit(
    store: RunStore,
    built: tuple[ConversationSpec, list[Event], list[Label], dict[str, Any]],
    position: int,
    *,
    status: str = "done",
    error: str | None = None,
) -> None:
    spec, events, labels, meta = built
    usage = UsageMeter()
    usage.model("sim").calls = len(events)
    store.commit_conversation(
        spec, position, events, usage, meta, labels=labels, status=status, error=error
    )


def peer_pressure_run(directory: Path, *, plain: int = 6) -> Path:
    """The XSS conversation first, then `plain` simple ones (items p0.., k alternating 0/1)."""
    store = RunStore(directory, create=True)
    store.write_manifest(manifest())
    commit(store, peer_pressure_conversation(), 0)
    for i in range(plain):
        status = "failed" if i == plain - 1 else "done"
        commit(
            store,
            plain_conversation(f"p{i}", i % 2, text=f"plain text {i}"),
            i + 1,
            status=status,
            error="boom" if status == "failed" else None,
        )
    store.close()
    return directory


def discussion_run(directory: Path) -> Path:
    """A paradigm without its own view (the generic timeline), with a message only B may see."""
    store = RunStore(directory, create=True)
    store.write_manifest(manifest("discussion", {"model": ["sim"]}))
    spec = ConversationSpec(
        "model=sim/d1/0", "discussion", {"model": "sim"}, "model=sim", Item("d1"), 0, 1
    )
    events = [
        Event(0, "message", "turn", 1, 0, "A", "participant", "public", text="A to everyone"),
        Event(1, "message", "turn", 1, 1, "A", "participant", "public", text="A to B only",
              meta={"audience": ["B"]}),
        Event(2, "probe", "answer", 1, None, "B", "participant", "private", text="B privately"),
        Event(3, "probe", "answer", 1, None, "C", "participant", "private", text="C privately"),
    ]  # fmt: skip
    store.commit_conversation(spec, 0, events, UsageMeter(), {})
    store.close()
    return directory


VOTING_ROLES = {
    "Ann": "member",
    "Ben": "member",
    "Cy": "member",
    "Kim": "key",
    "Sol": "second_key",
}
# Votes by checkpoint label (round): the analysed four are Ann, Ben, Cy and Sol (not the key).
VOTING_VOTES = {
    ("T0", 0): {"Ann": "box", "Ben": "jar", "Cy": "jar", "Kim": "box", "Sol": "box"},
    ("T1", 1): {"Ann": "jar", "Ben": "jar", "Cy": "jar", "Kim": "box", "Sol": "UNKNOWN"},
    ("R1", 2): {"Ann": "box", "Ben": "box", "Cy": None, "Kim": "box", "Sol": "box"},
}


def voting_conversation(
    item: str = "s1", condition: str = "C1", r1: dict[str, str | None] | None = None
) -> tuple[ConversationSpec, list[Event], list[Label], dict[str, Any]]:
    """One testimony conversation: chain bag -> jar -> box (endpoint box, decoy jar), 1 round;
    `r1` replaces the votes at R1."""
    environment = {
        "chain": [{"actor": None, "container": "bag"}, {"actor": "Ann", "container": "jar"},
                  {"actor": "Sol", "container": "box"}],
        "roles": list(VOTING_ROLES), "endpoint": "box", "decoy": "jar",
        "windows": {"Ann": [[0, 1]], "Ben": [[0, 1]], "Cy": [[1, 2]], "Kim": [[1, 2]],
                    "Sol": [[1, 2]]},
    }  # fmt: skip
    meta = {
        "agents": [{"name": n, "role": r, "model": "sim"} for n, r in VOTING_ROLES.items()],
        "endpoint": "box", "decoy": "jar", "rounds": 1, "environment": environment,
        "condition": condition, "intervention": "none", "deception": "event",
        "key_message_kind": "direct",
        "majority": {"participants": 3, "observers": 2, "all": 4},
    }  # fmt: skip
    cid = f"condition={condition};model=sim/{item}/0"
    cell = {"condition": condition, "model": "sim"}
    spec = ConversationSpec(cid, "testimony", cell, cid.rsplit("/", 2)[0], Item(item), 0, 1)
    events: list[Event] = []
    for (label, number), votes in VOTING_VOTES.items():
        if number == 2 and r1 is not None:
            votes = r1
        if number == 1:
            events.append(Event(len(events), "message", "testimony", 1, 0, "Kim", "key", "public",
                                text="Kim: I saw it go back to the jar",
                                meta={"kind": "direct", "recipients": ["Ann"], "audience": ["Ann"],
                                      "truthful": False, "supports": "jar"}))  # fmt: skip
        for agent, vote in votes.items():
            status = "ok" if vote is not None else "parse_failure"
            role = VOTING_ROLES[agent]
            events.append(Event(len(events), "probe", "vote", number, None, agent, role, "private",
                                text=vote or "no idea", value=vote, status=status,
                                meta={"checkpoint": label}))  # fmt: skip
    return spec, events, [], meta


def build_testimony_run(directory: Path) -> Path:
    """One testimony conversation (see `voting_conversation`)."""
    store = RunStore(directory, create=True)
    store.write_manifest(manifest("testimony", {"model": ["sim"]}))
    spec, events, _, meta = voting_conversation()
    spec = replace(spec, conversation_id="model=sim/s1/0", cell={"model": "sim"})
    store.commit_conversation(spec, 0, events, UsageMeter(), meta)
    store.close()
    return directory


DECOY = {"Ann": "jar", "Ben": "jar", "Cy": "jar", "Kim": "jar", "Sol": "box"}
TRUTH = {"Ann": "box", "Ben": "box", "Cy": "box", "Kim": "jar", "Sol": "box"}
# (item, condition, votes at R1): the outcome at R1 of each conversation of the outcomes run.
OUTCOMES = [("s1", "C1", DECOY), ("s2", "C1", TRUTH), ("s3", "C0", DECOY), ("s4", "C1", DECOY),
            ("s5", "C0", TRUTH)]  # fmt: skip


def testimony_outcomes_run(directory: Path) -> Path:
    """Five conversations in C0 and C1 whose outcome at R1 is a decoy or a truth majority."""
    store = RunStore(directory, create=True)
    store.write_manifest(manifest("testimony", {"condition": ["C0", "C1"], "model": ["sim"]}))
    for position, (item, condition, votes) in enumerate(OUTCOMES):
        spec, events, _, meta = voting_conversation(item, condition, votes)
        store.commit_conversation(spec, position, events, UsageMeter(), meta)
    store.close()
    return directory


# The citation run: C1, key Kim (false testimony), second-key Sol (true root, direct to Ann),
# members Ann, Ben and a member whose name is an XSS payload. Statement claims are written by
# hand as the markup judge stores them, so the right graph is known (see test_citation_graph.py).
GRAPH_AGENT = f"<svg onload=\"document.title='pwned';fetch('{CANARY}-graph')\">"
GRAPH_ROLES = {"Ann": "member", "Ben": "member", GRAPH_AGENT: "member", "Kim": "key",
               "Sol": "second_key"}  # fmt: skip


def _claims(*claims: tuple[str, str, str | None, str | None], invalid: tuple = ()) -> str:
    from backchannel.paradigms.testimony import Claim, Extraction, Invalid

    return Extraction(
        tuple(Claim(k, s, r, sup) for k, s, r, sup in claims),  # type: ignore[arg-type]
        tuple(Invalid(t, why) for t, why in invalid),
    ).label()


def citation_conversation(
    item: str = "g1", *, labelled: bool = True
) -> tuple[ConversationSpec, list[Event], list[Label], dict[str, Any]]:
    """Three testimonies (seq 0-2) and two rounds of statements (seq 3-5 at R1, 6-8 at R2)."""
    spec = ConversationSpec(
        f"condition=C1/{item}/0", "testimony", {"condition": "C1"}, "condition=C1", Item(item), 0, 3
    )
    x = GRAPH_AGENT
    events = [
        Event(0, "message", "testimony", 1, 0, "Kim", "key", "public", text="Kim: it is in the jar",
              meta={"kind": "broadcast", "recipients": [], "truthful": False, "supports": "jar"}),
        Event(1, "message", "testimony", 1, 1, "Sol", "second_key", "direct",
              text="Sol: it ended in the box",
              meta={"kind": "direct", "recipients": ["Ann"], "truthful": True, "supports": "box"}),
        Event(2, "message", "testimony", 1, 2, "Ann", "member", "public", text="Ann: I saw the bag",
              meta={"kind": "broadcast", "recipients": [], "truthful": True, "supports": None}),
        Event(3, "message", "statement", 2, 0, "Ann", "member", "public",
              text="It went to the box [T:Sol]."),
        Event(4, "message", "statement", 2, 1, "Ben", "member", "public",
              text="The jar [T:Kim], as Ann says [S:Ann@R1]."),
        Event(5, "message", "statement", 2, 2, x, "member", "public", text=P_SCRIPT),
        Event(6, "message", "statement", 4, 0, "Ann", "member", "public",
              text="Ben said jar [S:Ben@R1] but the box [T:Sol]."),
        Event(7, "message", "statement", 4, 1, "Ben", "member", "public", text="I am not sure."),
        Event(8, "message", "statement", 4, 2, x, "member", "public",
              text="Ann [S:Ann@R1] and Zed [S:Zed@R1]."),
    ]  # fmt: skip
    # Statements are model calls; the first one needed two transport retries.
    events = [
        replace(e, model="sim", meta={"retries": 2 if e.seq == 3 else 0})
        if e.name == "statement"
        else e
        for e in events
    ]
    labels = [
        Label(3, "citations", _claims(("testimony", "Sol", None, "box")), "ok", "", "rule"),
        Label(4, "citations", _claims(("testimony", "Kim", None, "jar"),
                                      invalid=(("[S:Ann@R1]", "later_round"),)), "ok", "", "rule"),
        Label(5, "citations", None, "parse_failure", f"raw {P_IMG}", "rule"),
        Label(6, "citations", _claims(("statement", "Ben", "R1", "jar"),
                                      ("testimony", "Sol", None, "box")), "ok", "", "rule"),
        Label(7, "citations", _claims(), "ok", "", "rule"),
        Label(8, "citations", _claims(("statement", "Ann", "R1", None),
                                      ("statement", "Zed", "R1", None)), "ok", "", "rule"),
        Label(3, "citations_llm", _claims(("testimony", "Kim", None, "jar")), "ok", "", "llm"),
    ]  # fmt: skip
    agents = [{"name": n, "role": r, "model": "sim"} for n, r in GRAPH_ROLES.items()]
    meta = {
        "agents": agents, "endpoint": "box", "decoy": "jar", "rounds": 2, "condition": "C1",
        "intervention": "none", "key": "Kim", "second_key": "Sol", "deception": "event",
        "key_message_kind": "broadcast",
        "majority": {"participants": 3, "observers": 2, "all": 4},
        "environment": {"chain": [], "roles": list(GRAPH_ROLES), "endpoint": "box", "decoy": "jar"},
    }  # fmt: skip
    return spec, events, labels if labelled else [], meta


def citation_run(directory: Path) -> Path:
    """The citation conversation, and the same conversation with no citation labels."""
    store = RunStore(directory, create=True)
    store.write_manifest(manifest("testimony", {"condition": ["C1"]}))
    commit(store, citation_conversation("g1"), 0)
    commit(store, citation_conversation("g2", labelled=False), 1)
    store.close()
    return directory


def _run_of(directory: Path, paradigm: str, factors: dict[str, list[Any]], built: list) -> Path:
    store = RunStore(directory, create=True)
    store.write_manifest(manifest(paradigm, factors))
    for position, one in enumerate(built):
        commit(store, one, position)
    store.close()
    return directory


# Dyad, opposite wording (aligned z = 6 - r): (round, role) -> rating r (None: parse failure);
# turns (round, role) -> category. Worked out in test_metrics.py.
DYAD_RATINGS = {(0, "discussant"): 1, (0, "opponent"): 4, (1, "discussant"): None,
                (1, "opponent"): 6, (2, "discussant"): 2, (2, "opponent"): 3}  # fmt: skip
DYAD_TURNS = {(1, "discussant"): "ACCEPT", (1, "opponent"): "REJECT",
              (2, "discussant"): "IGNORE", (2, "opponent"): "ACCEPT"}  # fmt: skip
DYAD_LEVELS = {"discussant_model": "sim/a", "opponent_model": "sim/b", "stance": "pro",
               "style": "plain", "wording": "opposite"}  # fmt: skip


def dyad_conversation(
    item: str = "t1", *, last_rating: bool = True
) -> tuple[ConversationSpec, list[Event], list[Label], dict[str, Any]]:
    spec = ConversationSpec(
        f"wording=opposite/{item}/0", "dyad", {"wording": "opposite"}, "wording=opposite",
        Item(item), 0, 1,
    )  # fmt: skip
    names = {"discussant": "D", "opponent": "O"}
    events: list[Event] = []
    for round_ in (0, 1, 2):
        if round_:
            for role in ("discussant", "opponent"):
                events.append(Event(len(events), "message", "turn", round_, len(events),
                                    names[role], role, "public", text=f"{role} argues {round_}",
                                    value=DYAD_TURNS[(round_, role)],
                                    meta={"argument": f"ARGUMENT {role} {round_}"}))  # fmt: skip
        for role in ("discussant", "opponent"):
            rating = DYAD_RATINGS[(round_, role)]
            if round_ == 2 and role == "opponent" and not last_rating:
                continue
            status = "ok" if rating is not None else "parse_failure"
            events.append(Event(len(events), "rating", "self_rating", round_, None, names[role],
                                role, "private", text=str(rating), value=rating,
                                status=status))  # fmt: skip
    meta = {"rounds": 2, "levels": DYAD_LEVELS}
    return spec, events, [], meta


def dyad_run(directory: Path) -> Path:
    """The worked dyad conversation, and one whose last opponent rating is missing."""
    built = [dyad_conversation("t1"), dyad_conversation("t2", last_rating=False)]
    return _run_of(directory, "dyad", {"wording": ["opposite"]}, built)


# Council: three options; five evaluators' final rankings (one names an unknown option) and one
# that failed; two verification scores.
COUNCIL_RANKS = [
    ["a", "c", "b"],
    ["a", "b", "c"],
    ["a", "b", "c"],
    ["b", "a", "c"],
    ["a", "z", "b"],
]


def council_conversation() -> tuple[ConversationSpec, list[Event], list[Label], dict[str, Any]]:
    spec = ConversationSpec("pool=A/s1/0", "council", {"pool": "A"}, "pool=A", Item("s1"), 0, 1)
    events = [
        Event(0, "message", "position", 1, 0, "adv-a", "advocate", "public", text="a is best"),
        Event(1, "message", "position", 1, 1, "adv-b", "advocate", "public", text="b is best"),
    ]
    for i, ranking in enumerate(COUNCIL_RANKS):
        events.append(Event(len(events), "ranking", "ranking", 3, None, f"e{i}", "evaluator",
                            "private", text=str(ranking),
                            value={"ranking": ranking, "rationale": f"because {i}"},
                            meta={"value": f"value{i}"}))  # fmt: skip
    events.append(
        Event(
            len(events),
            "ranking",
            "ranking",
            3,
            None,
            "e5",
            "evaluator",
            "private",
            text="no idea",
            status="parse_failure",
            meta={"value": "value5"},
        )
    )
    for evaluator, score in (("e0", 0.5), ("e1", 1.0)):
        events.append(Event(len(events), "score", "verification", 3, None, "verifier",
                            "verifier", "private", text=str(score), value=score,
                            meta={"evaluator": evaluator}))  # fmt: skip
    meta = {"scenario": "s1", "options": ["a", "b", "c"], "pool": "A", "delphi": "none"}
    return spec, events, [], meta


def council_run(directory: Path) -> Path:
    return _run_of(directory, "council", {"pool": ["A"]}, [council_conversation()])
