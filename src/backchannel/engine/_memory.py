"""The transcript of a room and each agent's view of it.

An agent sees the last H rounds (the current round's earlier turns included), its own messages as
"You:" and others by name: every public message, and a direct message only when it sent it or is
one of its recipients. Private probe answers never enter the transcript, so no view can contain
them; nor does anyone's reasoning, except an agent's own when it is allowed to recall it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

MODERATOR = "Moderator"


@dataclass(frozen=True, slots=True)
class Entry:
    """One message of the room: round 0 is the opening; `recipients` None means public.

    `reasoning` is what the speaker thought before it: only the speaker may ever see it.
    """

    round: int
    turn: int
    speaker: str
    text: str
    recipients: frozenset[str] | None = None
    reasoning: str = ""

    def visible_to(self, name: str) -> bool:
        return self.recipients is None or name == self.speaker or name in self.recipients


def visible_entries(
    transcript: Sequence[Entry],
    viewer: str,
    completed_rounds: int,
    memory_rounds: int | None,
    heard: Collection[str] | None = None,
) -> list[Entry]:
    """Entries `viewer` can see once `completed_rounds` rounds are over.

    The opening (round 0) is always shown; so are the last `memory_rounds` completed rounds and
    the earlier turns of a round in progress. A turn in round r therefore sees rounds r-H..r-1
    plus round r so far, and a probe after round r sees rounds r-H+1..r: the first speaker of a
    round and the probe before it see the same history. With `heard` (a topology), only those
    agents' messages are shown, besides the viewer's own and the moderator's.
    """
    oldest = 1 if memory_rounds is None else completed_rounds - memory_rounds + 1
    return [
        e
        for e in transcript
        if e.visible_to(viewer)
        and (e.round == 0 or e.round >= oldest)
        and (heard is None or e.speaker in heard or e.speaker in (viewer, MODERATOR))
    ]


def render_view(
    entries: Sequence[Entry], viewer: str, self_name: str = "You", own_reasoning: bool = False
) -> str:
    """The transcript as text: the viewer's own lines under `self_name`, others by name.

    With `own_reasoning`, the viewer's own messages are preceded by its own reasoning.
    """
    lines = []
    for entry in entries:
        own = entry.speaker == viewer
        speaker = self_name if own else entry.speaker
        if own and own_reasoning and entry.reasoning.strip():
            lines.append(f"{speaker} (private reasoning): {entry.reasoning.strip()}")
        lines.append(f"{speaker}: {entry.text.strip()}")
    return "\n\n".join(lines)
