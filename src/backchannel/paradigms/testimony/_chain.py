"""State chains of one target object, extracted from Hi-ToM stories.

A chain l0 -a1-> l1 -a2-> ... -am-> lm lists the initial container and every later move of the
object introduced in chapter 1, with the actor of each move; lm is the true endpoint. A container
visited twice is two distinct nodes, so node order is the order of the moves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE = re.compile(r"^(\d+) (.*)$")
_IS_IN = re.compile(r"^The (\S+) is in the (\S+)\.$")
_MOVED = re.compile(r"^(\w+) moved the (\S+) to the (\S+)\.$")
_ENTERED = re.compile(r"^(.+) entered the (\S+)\.$")


class StoryError(ValueError):
    """A story whose text cannot be read as a Hi-ToM story."""


@dataclass(frozen=True, slots=True)
class Node:
    """One state of the chain: where the object is, and who moved it there (None for l0)."""

    container: str
    actor: str | None = None

    def __post_init__(self) -> None:
        if not self.container:
            raise ValueError("a chain node needs a container")


@dataclass(frozen=True, slots=True)
class Chain:
    """The target object's state chain and the story's roles, in order of first appearance."""

    story_id: str
    target: str
    nodes: tuple[Node, ...]
    roles: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.nodes or self.nodes[0].actor is not None:
            raise ValueError("a chain starts with an initial node that no one moved there")
        if any(node.actor is None for node in self.nodes[1:]):
            raise ValueError("every node after the first needs the actor of its move")
        for before, after in zip(self.nodes, self.nodes[1:], strict=False):
            if before.container == after.container:
                raise ValueError(f"a move must change the container ({after.container})")

    @property
    def moves(self) -> int:
        """m, the number of moves."""
        return len(self.nodes) - 1

    @property
    def endpoint(self) -> str:
        """lm, the true endpoint."""
        return self.nodes[-1].container

    @property
    def decoy(self) -> str:
        """l(m-1), the state before the final move (the decoy of every deception type)."""
        return self.nodes[-2].container

    def actor(self, move: int) -> str:
        """The actor of move t (1..m)."""
        actor = self.nodes[move].actor
        assert actor is not None
        return actor


def story_lines(story: str) -> list[str]:
    """The numbered lines of a story, without their numbers (a VP header and "***" dropped)."""
    lines = []
    for raw in story.splitlines():
        match = _LINE.match(raw.strip())
        if match:
            lines.append(match.group(2).strip())
    if not lines:
        raise StoryError("the story has no numbered lines")
    return lines


def _names(group: str) -> list[str]:
    return [name.strip() for name in re.split(r", | and ", group) if name.strip()]


def extract_chain(story: str, story_id: str) -> Chain:
    """The chain of the object of chapter 1: its first `The O is in the C.` and every later
    `A moved the O to the C.` of that object, in story order."""
    target: str | None = None
    nodes: list[Node] = []
    roles: list[str] = []
    for line in story_lines(story):
        entered = _ENTERED.match(line)
        if entered:
            roles.extend(n for n in _names(entered.group(1)) if n not in roles)
            continue
        is_in = _IS_IN.match(line)
        if is_in and target is None:
            target = is_in.group(1)
            nodes.append(Node(is_in.group(2)))
            continue
        if is_in and is_in.group(1) == target and is_in.group(2) != nodes[-1].container:
            # A later chapter states where the object is; it must be where the chain left it.
            raise StoryError(f"the story puts the {target} in the {is_in.group(2)} unmoved")
        moved = _MOVED.match(line)
        if moved and target is not None and moved.group(2) == target:
            actor, container = moved.group(1), moved.group(3)
            if actor not in roles:
                raise StoryError(f"{actor} moves the {target} without entering")
            if container == nodes[-1].container:
                raise StoryError(f"a move leaves the {target} where it was (the {container})")
            nodes.append(Node(container, actor))
    if target is None:
        raise StoryError("no line says where an object is")
    return Chain(story_id, target, tuple(nodes), tuple(roles))
