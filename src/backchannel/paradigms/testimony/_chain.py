"""State chains of one target object, extracted from Hi-ToM stories.

A chain l0 -a1-> l1 -a2-> ... -am-> lm lists the initial container and every later move of one
object (by default the one introduced in chapter 1; any chapter's object can be followed), with
the actor of each move; lm is the true endpoint. A container visited twice is two distinct
nodes, so node order is the order of the moves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_LINE = re.compile(r"^(\d+) (.*)$")
_IS_IN = re.compile(r"^The (\S+) is in the (\S+)\.$")
_MOVED = re.compile(r"^(\w+) moved the (\S+) to the (\S+)\.$")
_ENTERED = re.compile(r"^(.+) entered the (\S+)\.$")
_STAYED = re.compile(r"^(\w+) made no movements and stayed in the (\S+) for 1 minute\.$")
WAITING_ROOM = "waiting_room"


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


def objects(story: str) -> list[str]:
    """The objects of a story, in the order they are introduced (one per chapter)."""
    found: list[str] = []
    for line in story_lines(story):
        is_in = _IS_IN.match(line)
        if is_in and is_in.group(1) not in found:
            found.append(is_in.group(1))
    return found


def extract_chain(story: str, story_id: str, target: str | None = None) -> Chain:
    """The chain of `target` (default: the object of chapter 1): its first `The O is in the C.`
    and every later `A moved the O to the C.` of that object, in story order."""
    return _chain_of(story_lines(story), story_id, target)


def _chain_of(lines: list[str], story_id: str, target: str | None) -> Chain:
    nodes: list[Node] = []
    roles: list[str] = []
    for line in lines:
        entered = _ENTERED.match(line)
        if entered:
            roles.extend(n for n in _names(entered.group(1)) if n not in roles)
            continue
        is_in = _IS_IN.match(line)
        if is_in and not nodes and (target is None or is_in.group(1) == target):
            target = is_in.group(1)
            nodes.append(Node(is_in.group(2)))
            continue
        if is_in and is_in.group(1) == target and is_in.group(2) != nodes[-1].container:
            # A later chapter states where the object is; it must be where the chain left it.
            raise StoryError(f"the story puts the {target} in the {is_in.group(2)} unmoved")
        moved = _MOVED.match(line)
        if moved and nodes and moved.group(2) == target:
            actor, container = moved.group(1), moved.group(3)
            if actor not in roles:
                raise StoryError(f"{actor} moves the {target} without entering")
            if container == nodes[-1].container:
                raise StoryError(f"a move leaves the {target} where it was (the {container})")
            nodes.append(Node(container, actor))
    if target is None or not nodes:
        raise StoryError(f"no line says where {'an object' if target is None else target} is")
    return Chain(story_id, target, tuple(nodes), tuple(roles))


@dataclass(frozen=True, slots=True)
class AddedMove:
    """A story adapted by one added move: a role that made no movement moves the object."""

    chain: Chain
    actor: str
    container: str

    def describe(self) -> str:
        return (
            f"added move: {self.actor}, who made no movement, moves the {self.chain.target} to "
            f"the {self.container}"
        )


def add_move(
    story: str, story_id: str, target: str, containers: tuple[str, ...]
) -> AddedMove | None:
    """The story with one added move of `target`, or None when it has no place for one.

    The first `A made no movements and stayed in the ROOM` line in the object's room, after the
    object is introduced and before its final move, becomes `A moved the O to the C.`, where C is
    the first of `containers` the chain never visits. The chain keeps its endpoint.
    """
    lines = story_lines(story)
    chain = _chain_of(lines, story_id, target)
    if chain.moves == 0:
        return None
    room: str | None = None
    home: str | None = None
    last_move = max(
        i for i, line in enumerate(lines) if (m := _MOVED.match(line)) and m.group(2) == target
    )
    fresh = [c for c in containers if c not in {n.container for n in chain.nodes}]
    if not fresh:
        return None
    for index, line in enumerate(lines[:last_move]):
        entered = _ENTERED.match(line)
        if entered and entered.group(2) != WAITING_ROOM:
            room = entered.group(2)
        is_in = _IS_IN.match(line)
        if is_in and is_in.group(1) == target and home is None:
            home = room
        stayed = _STAYED.match(line)
        if stayed and home is not None and stayed.group(2) == home:
            adapted = [*lines[:index], f"{stayed.group(1)} moved the {target} to the {fresh[0]}."]
            adapted += lines[index + 1 :]
            try:
                changed = _chain_of(adapted, story_id, target)
            except StoryError:  # a later chapter states where the object was before
                return None
            return AddedMove(changed, stayed.group(1), fresh[0])
    return None
