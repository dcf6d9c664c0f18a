"""The words of observations and testimony: what a role saw, told without move numbers.

Observations speak to the role ("You saw Jack move the peas from the red_crate to ..."); testimony
is the role's own account ("I saw ..."). Neither ever says which move of the chain it was.
"""

from __future__ import annotations

from collections.abc import Sequence

from backchannel.paradigms.testimony._chain import Chain
from backchannel.paradigms.testimony._windows import Window

_VOICES = {
    "you": {"I": "You", "i": "you", "was": "were"},
    "i": {"I": "I", "i": "I", "was": "was"},
}


def window_sentences(chain: Chain, role: str, window: Window, voice: str, later: bool) -> list[str]:
    """One window as sentences: entering, every move seen or made, leaving."""
    v = _VOICES[voice]
    obj, nodes = chain.target, chain.nodes
    opening = (
        f"Later {v['i']} came back while the {obj} was in the {nodes[window.start].container}."
        if later
        else f"{v['I']} entered while the {obj} was in the {nodes[window.start].container}."
    )
    sentences = [opening]
    for move in window.moves:
        actor, before, after = chain.actor(move), nodes[move - 1].container, nodes[move].container
        if actor == role:
            sentences.append(f"{v['I']} moved the {obj} from the {before} to the {after}.")
        else:
            sentences.append(
                f"{v['I']} saw {actor} move the {obj} from the {before} to the {after}."
            )
    sentences.append(f"When {v['i']} left, the {obj} was in the {nodes[window.end].container}.")
    return sentences


def account(chain: Chain, role: str, windows: Sequence[Window], voice: str) -> str:
    """Everything a role saw, window by window, in its own order."""
    sentences: list[str] = []
    for index, window in enumerate(windows):
        sentences.extend(window_sentences(chain, role, window, voice, later=index > 0))
    return " ".join(sentences)


def false_tail(chain: Chain, deception: str, mover: str, relay: str) -> list[str]:
    """The key role's false account of its window over the final move, by deception type.

    The decoy is l(m-1) in all three: `event` adds a move back after the end, `coverage` stretches
    the window past the final move and puts l(m-1) after lm, `source` presents an older direct
    report about l(m-1) as received after the final move.
    """
    obj, decoy, end = chain.target, chain.decoy, chain.endpoint
    entered = f"I entered while the {obj} was in the {decoy}."
    saw_final = f"I saw {mover} move the {obj} from the {decoy} to the {end}."
    if deception == "event":
        return [
            entered,
            saw_final,
            f"After {mover} left, I moved the {obj} from the {end} back to the {decoy}.",
            f"When I left, the {obj} was in the {decoy}.",
        ]
    if deception == "coverage":
        return [
            entered,
            saw_final,
            f"I stayed in the room after that move, and later I saw the {obj} in the {decoy} "
            "again; it was still there when I left, at the very end.",
        ]
    if deception == "source":
        return [
            entered,
            saw_final,
            f"After that move, {relay} told me privately that the {obj} is in the {decoy}.",
            f"That report came after the move I saw, so the {decoy} is the latest confirmed "
            f"place of the {obj}.",
        ]
    raise ValueError(f"unknown deception type {deception!r}")
