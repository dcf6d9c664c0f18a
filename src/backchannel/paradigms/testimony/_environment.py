"""Environments: one object-moving story with its chain, windows, roles and testimony.

The JSON form (documented in docs/paradigms/testimony.md) is what the package ships and what a
run stores with each conversation.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

from backchannel.paradigms.testimony._chain import Chain, Node
from backchannel.paradigms.testimony._windows import Window

Deception = Literal["event", "coverage", "source"]
MessageKind = Literal["direct", "broadcast"]
DECEPTIONS: tuple[Deception, ...] = ("event", "coverage", "source")
FORMAT_VERSION = 1


@dataclass(frozen=True, slots=True)
class WitnessMessage:
    """One role's message, sent after all moves: direct (to one role) or broadcast (to all).

    `nodes` are the chain nodes whose states the message reports truthfully; `supports` is the
    endpoint it points to (the last place it reports); `fabricated` lists its false claims.
    """

    sender: str
    kind: MessageKind
    recipients: tuple[str, ...]
    text: str
    nodes: tuple[int, ...]
    supports: str | None
    fabricated: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind == "direct" and len(self.recipients) != 1:
            raise ValueError(f"{self.sender}'s direct message needs exactly one recipient")
        if self.sender in self.recipients:
            raise ValueError(f"{self.sender} cannot send a message to itself")
        if not self.text.strip():
            raise ValueError(f"{self.sender}'s message is empty")

    @property
    def truthful(self) -> bool:
        return not self.fabricated

    def as_dict(self) -> dict[str, Any]:
        return {
            "sender": self.sender,
            "kind": self.kind,
            "recipients": list(self.recipients),
            "text": self.text,
            "asserts": {
                "nodes": list(self.nodes),
                "supports": self.supports,
                "fabricated": list(self.fabricated),
            },
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WitnessMessage:
        asserts = data.get("asserts", {})
        return cls(
            sender=data["sender"],
            kind=data["kind"],
            recipients=tuple(data.get("recipients", ())),
            text=data["text"],
            nodes=tuple(asserts.get("nodes", ())),
            supports=asserts.get("supports"),
            fabricated=tuple(asserts.get("fabricated", ())),
        )


@dataclass(frozen=True, slots=True)
class Environment:
    """A verified story: chain, windows, key roles, observations and both conditions' messages.

    `messages` are the honest (C0) messages, one per role; `false_message` replaces the key
    role's message in C1 (type `deception`).
    """

    id: str
    source: str
    chain: Chain
    containers: tuple[str, ...]
    slots: dict[str, str]
    windows: dict[str, tuple[Window, ...]]
    key: str
    second_key: str
    observations: dict[str, str]
    messages: tuple[WitnessMessage, ...]
    deception: Deception
    false_message: WitnessMessage
    adaptations: tuple[str, ...] = ()
    """How the source story was adapted (an added move, adapted windows); empty if not."""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def roles(self) -> tuple[str, ...]:
        return self.chain.roles

    @property
    def key_message(self) -> WitnessMessage:
        return self.message_of(self.key)

    @property
    def key_kind(self) -> MessageKind:
        return self.key_message.kind

    def message_of(self, role: str) -> WitnessMessage:
        for message in self.messages:
            if message.sender == role:
                return message
        raise KeyError(role)

    def messages_for(self, condition: str) -> tuple[WitnessMessage, ...]:
        """The five messages of a condition: in C1 the key's is the false one."""
        if condition == "C0":
            return self.messages
        return tuple(self.false_message if m.sender == self.key else m for m in self.messages)

    def as_dict(self, condition: str | None = None) -> dict[str, Any]:
        """The documented JSON form; with a condition, only that condition's messages."""
        data: dict[str, Any] = {
            "format": FORMAT_VERSION,
            "id": self.id,
            "story_id": self.chain.story_id,
            "source": self.source,
            "object": self.chain.target,
            "roles": list(self.roles),
            "containers": list(self.containers),
            "chain": [{"container": n.container, "actor": n.actor} for n in self.chain.nodes],
            "endpoint": self.chain.endpoint,
            "decoy": self.chain.decoy,
            "slots": dict(self.slots),
            "windows": {r: [[w.start, w.end] for w in ws] for r, ws in self.windows.items()},
            "key": self.key,
            "second_key": self.second_key,
            "key_message_kind": self.key_kind,
            "observations": dict(self.observations),
            "deception": self.deception,
            "adaptations": list(self.adaptations),
        }
        if condition is None:
            data["messages"] = [m.as_dict() for m in self.messages]
            data["false_message"] = self.false_message.as_dict()
        else:
            data["condition"] = condition
            data["messages"] = [m.as_dict() for m in self.messages_for(condition)]
        data.update(self.extra)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Environment:
        known = {
            "format",
            "id",
            "story_id",
            "source",
            "object",
            "roles",
            "containers",
            "chain",
            "endpoint",
            "decoy",
            "slots",
            "windows",
            "key",
            "second_key",
            "key_message_kind",
            "observations",
            "deception",
            "messages",
            "false_message",
            "adaptations",
        }
        chain = Chain(
            story_id=data["story_id"],
            target=data["object"],
            nodes=tuple(Node(n["container"], n.get("actor")) for n in data["chain"]),
            roles=tuple(data["roles"]),
        )
        return cls(
            id=data["id"],
            source=data.get("source", "hitom"),
            chain=chain,
            containers=tuple(data["containers"]),
            slots=dict(data["slots"]),
            windows={r: tuple(Window(s, e) for s, e in ws) for r, ws in data["windows"].items()},
            key=data["key"],
            second_key=data["second_key"],
            observations=dict(data["observations"]),
            messages=tuple(WitnessMessage.from_dict(m) for m in data["messages"]),
            deception=data["deception"],
            false_message=WitnessMessage.from_dict(data["false_message"]),
            adaptations=tuple(data.get("adaptations", ())),
            extra={k: v for k, v in data.items() if k not in known},
        )


SHIPPED = "environments.json"


def load_environments(path: Path | None = None) -> list[Environment]:
    """The shipped environments, or those of a file in the same format (`{"environments": []}`)."""
    if path is None:
        text = (
            resources.files("backchannel.paradigms.testimony")
            .joinpath("data", SHIPPED)
            .read_text(encoding="utf-8")
        )
    else:
        text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    return [Environment.from_dict(entry) for entry in data["environments"]]
