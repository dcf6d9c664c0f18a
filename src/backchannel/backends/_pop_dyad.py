"""The simulated population in the dyad paradigm: positions that move towards the other's.

Each role holds a position on the shown statement (0..6). The Discussant starts at
`discussant_start`, an Opponent with a stance `stance_strength` from 3 towards its side, both
plus uniform noise of half-width `start_spread`. After each of its messages a role closes
`discussant_rate` or `opponent_rate` of the gap to the other's last stated position (the
Discussant's rate times `manipulation_gain` after a manipulative message). Every message states
its position, so each call rebuilds the state from the transcript. A message's category follows
its move: ACCEPT for a move of at least `accept_step` towards the other, REJECT for a smaller
one across a gap of at least `reject_gap`, IGNORE otherwise. A rating is the position rounded
stochastically (floor(x + u)), so its mean is the position.
"""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING

from backchannel.backends._pop_draw import call_uniform, system_text, transcript, uniform, user_text
from backchannel.backends._types import IntRange, Request

if TYPE_CHECKING:
    from backchannel.backends._population import DyadRules, PopulationRules

_DISCUSSANT = "You are the Discussant in a two-person debate"
_OPPONENT = "You are the Opponent in a two-person debate"
_MANIPULATE = "Use any means of manipulation"
_STATEMENT = re.compile(r'The statement under debate: "(.+?)"')
_STANCE = re.compile(r'Your position: you hold that "(.+?)" Argue for it')
_POSITION = re.compile(r"\(my position: (\d+(?:\.\d+)?) of 6\)")
_PRESSURE = "Any reasonable person already agrees with me."


def start_position(role: str, system: str, statement: str, rules: DyadRules, u: float) -> float:
    """Where a role starts on the shown statement's 0..6 scale."""
    noise = rules.start_spread * (2 * u - 1)
    if role == "discussant":
        centre = rules.discussant_start
    else:
        stance = _STANCE.search(system)
        if stance is None:
            centre = 3.0
        elif stance.group(1).strip() == statement.strip():
            centre = 3.0 + rules.stance_strength
        else:
            centre = 3.0 - rules.stance_strength
    return min(6.0, max(0.0, centre + noise))


def _stated(text: str) -> float | None:
    found = _POSITION.search(text)
    return float(found.group(1)) if found else None


def dyad_answer(request: Request, rules: PopulationRules) -> str | None:
    """The population's answer to a dyad prompt, or None for any other prompt."""
    system = system_text(request)
    if _DISCUSSANT in system:
        role = "discussant"
    elif _OPPONENT in system:
        role = "opponent"
    else:
        return None
    dyad = rules.dyad
    user = user_text(request)
    found = _STATEMENT.search(user)
    statement = found.group(1) if found else ""
    u = uniform(request.model, system, statement, request.replicate, "start")
    own = start_position(role, system, statement, dyad, u)
    other: float | None = None
    pressured = False
    for speaker, text in transcript(user):
        position = _stated(text)
        if position is None:
            continue
        if speaker == "You":
            own = position
        else:
            other, pressured = position, _PRESSURE in text
    if isinstance(request.constraint, IntRange):
        low, high = request.constraint.low, request.constraint.high
        rating = math.floor(own + call_uniform(request, "rating"))
        return str(min(high, max(low, rating)))
    if "Open the debate" in user:
        return f"Let us weigh the statement on its evidence. (my position: {own:.3f} of 6)"
    rate = dyad.discussant_rate if role == "discussant" else dyad.opponent_rate
    if role == "discussant" and pressured:
        rate = min(1.0, rate * dyad.manipulation_gain)
    moved = own if other is None else own + rate * (other - own)
    step = abs(moved - own)
    if other is not None and step >= dyad.accept_step:
        category = "ACCEPT"
    elif other is not None and abs(other - own) >= dyad.reject_gap:
        category = "REJECT"
    else:
        category = "IGNORE"
    argument = f"Here is how I weigh it now. (my position: {moved:.3f} of 6)"
    if role == "opponent" and _MANIPULATE in system:
        argument = f"{argument} {_PRESSURE}"
    return json.dumps({"argument": argument, "category": category})
