"""The simulated population of the dyad (`sim/population`): positions that move towards the
other's, keyed by the paradigm's prompt names.

Each role holds a position on the shown statement (0..6). The Discussant starts at
`discussant_start`, an Opponent with a stance `stance_strength` from 3 towards its side, both
plus uniform noise of half-width `start_spread`. After each of its messages a role closes
`discussant_rate` or `opponent_rate` of the gap to the other's last stated position (the
Discussant's rate times `manipulation_gain` after a manipulative message). Every message states
its position, so each call rebuilds the state from what the role saw. A message's category
follows its move: ACCEPT for a move of at least `accept_step` towards the other, REJECT for a
smaller one across a gap of at least `reject_gap`, IGNORE otherwise. A rating is the position
rounded stochastically (floor(x + u)), so its mean is the position. The role, the statement
shown and the Opponent's stance and style come from the call information.

Two planted lasting traits part what a role says from what it believes: a role is, by a draw
fixed per (model, instructions, statement, replicate), a hidden changer (`hidden_change`: it
tags every reply IGNORE while its position closes up to one point of the gap each reply) or an
accommodator (`public_accommodation`: it tags every reply ACCEPT while its position stays).
With `susceptibility` a set, the Friedkin-Johnsen rule replaces these moves: positions are
whole numbers (the start rounded) and ratings state them exactly. On reading each of the other's
turns (the opening does not count) a role steps one point in the direction of
d = a (other - own) + s (start - own) with probability min(1, |d|) (a times
`manipulation_gain` after a manipulative turn; no step at the other's position), by a draw
fixed for the role and the round read, so its ratings and its next turn agree. Its next turn
states the new position, tagged ACCEPT for a step towards the other, REJECT for one away,
IGNORE for none: exactly what the interaction state's accumulator makes of the tag, so the
state is the position, and its expected change is the Friedkin-Johnsen one with
susceptibility a and stubbornness s (while |d| <= 1).
"""

from __future__ import annotations

import json
import math
import re

from pydantic import BaseModel, ConfigDict, Field, model_validator

from backchannel.backends import IntRange, Population, PopulationCall
from backchannel.paradigms.dyad._extract import RATING_NAME
from backchannel.paradigms.dyad._scale import DISCUSSANT, SCALE_MAX, SCALE_MID, SCALE_MIN

STATEMENT = "statement"
"""Call fact: the statement both roles are shown."""
HOLDS = "holds"
"""Call fact of the Opponent: the statement its stance argues for (None: neutral)."""
MANIPULATIVE = "manipulative"
"""Call fact of the Opponent: whether its style is manipulative."""
OPENING, TURN = "opening", "turn"
OFF_THE_RECORD = "off_the_record"
"""The private rating after a message: the role's position, as a checkpoint's rating is."""

_POSITION = re.compile(r"\(my position: (\d+(?:\.\d+)?) of 6\)")
_PRESSURE = "Any reasonable person already agrees with me."


class DyadPopulation(BaseModel):
    """Dyad: positions on the shown statement that move towards the other's position."""

    model_config = ConfigDict(extra="forbid")

    discussant_rate: float = Field(
        0.15, ge=0, le=1, description="Share of the gap the Discussant closes after each message."
    )
    opponent_rate: float = Field(
        0.05, ge=0, le=1, description="Share of the gap the Opponent closes after each message."
    )
    manipulation_gain: float = Field(
        1.5, ge=0, description="Factor on the Discussant's rate when the Opponent manipulates."
    )
    discussant_start: float = Field(
        3.0, ge=0, le=6, description="The Discussant's starting agreement with the statement."
    )
    stance_strength: float = Field(
        2.5, ge=0, le=3, description="How far from 3 an Opponent with a stance starts."
    )
    start_spread: float = Field(
        0.5, ge=0, le=3, description="Half-width of the uniform noise on starting positions."
    )
    accept_step: float = Field(
        0.2, gt=0, description="A move towards the other of at least this much is an ACCEPT."
    )
    reject_gap: float = Field(
        1.0, ge=0, description="A smaller move at a gap of at least this much is a REJECT."
    )
    hidden_change: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Chance a role is a hidden changer: it tags every reply IGNORE while its "
        "position closes up to one point of the gap each reply.",
    )
    public_accommodation: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Chance a role is an accommodator: it tags every reply ACCEPT while its "
        "position stays where it is.",
    )

    @model_validator(mode="after")
    def _traits_fit(self) -> DyadPopulation:
        if self.hidden_change + self.public_accommodation > 1:
            raise ValueError("hidden_change + public_accommodation must not exceed 1")
        return self

    susceptibility: float | None = Field(
        None,
        ge=0,
        le=1,
        description="Friedkin-Johnsen rule (null: off): the weight of the other's stated "
        "position in each whole-point step.",
    )
    stubbornness: float = Field(
        0.0,
        ge=0,
        le=1,
        description="Friedkin-Johnsen rule: the weight of the role's own starting position.",
    )


Call = PopulationCall[DyadPopulation]


def start_position(
    role: str, holds: str | None, statement: str, rules: DyadPopulation, u: float
) -> float:
    """Where a role starts on the shown statement's 0..6 scale (`holds`: the statement an
    Opponent's stance argues for, None when neutral)."""
    noise = rules.start_spread * (2 * u - 1)
    if role == DISCUSSANT:
        centre = rules.discussant_start
    elif holds is None:
        centre = float(SCALE_MID)
    elif holds.strip() == statement.strip():
        centre = SCALE_MID + rules.stance_strength
    else:
        centre = SCALE_MID - rules.stance_strength
    return min(float(SCALE_MAX), max(float(SCALE_MIN), centre + noise))


def _stated(text: str) -> float | None:
    found = _POSITION.search(text)
    return float(found.group(1)) if found else None


class _Role:
    """One role's position and the other's last stated one, rebuilt from what it saw."""

    def __init__(self, call: Call) -> None:
        facts = call.info.facts
        self.role = call.info.role
        statement = str(facts.get(STATEMENT, ""))
        holds = facts.get(HOLDS)
        u = call.uniform(call.model, call.system, statement, call.request.replicate, "start")
        self.own = start_position(
            self.role, None if holds is None else str(holds), statement, call.params, u
        )
        planted = call.params.susceptibility is not None
        if planted:
            self.own = float(math.floor(self.own + 0.5))
        self.start = self.said = self.own
        self.other: float | None = None
        self.pressured = False
        for seen in call.info.seen:
            position = _stated(seen.text)
            if position is None:
                continue
            if seen.own:
                self.own = self.said = position
            else:
                self.other, self.pressured = position, _PRESSURE in seen.text
                if planted and seen.round >= 1:
                    self.own = fj_step(call, self, seen.round)


HIDDEN, ACCOMMODATING = "hidden", "accommodating"


def divergence_trait(call: Call) -> str | None:
    """The role's planted trait: a hidden changer, an accommodator, or neither (None), by a draw
    fixed for (model, instructions, statement, replicate)."""
    rules = call.params
    statement = str(call.info.facts.get(STATEMENT, ""))
    u = call.uniform(call.model, call.system, statement, call.request.replicate, "divergence")
    if u < rules.hidden_change:
        return HIDDEN
    if u < rules.hidden_change + rules.public_accommodation:
        return ACCOMMODATING
    return None


def _planted(
    call: Call, own: float, other: float, moved: float, category: str
) -> tuple[float, str]:
    """A reply's position and category under the role's planted trait."""
    trait = divergence_trait(call)
    if trait == HIDDEN:
        gap = other - own
        return own + max(-1.0, min(1.0, gap)), "IGNORE"
    if trait == ACCOMMODATING:
        return own, "ACCEPT"
    return moved, category


def _rating(call: Call) -> str:
    own = _Role(call).own
    constraint = call.request.constraint
    low, high = (
        (constraint.low, constraint.high)
        if isinstance(constraint, IntRange)
        else (SCALE_MIN, SCALE_MAX)
    )
    exact = call.params.susceptibility is not None  # whole positions, stated as they are
    rating = round(own) if exact else math.floor(own + call.fresh("rating"))
    return str(min(high, max(low, rating)))


def _opening(call: Call) -> str:
    return f"Let us weigh the statement on its evidence. (my position: {_Role(call).own:.3f} of 6)"


def fj_step(call: Call, state: _Role, read: int) -> float:
    """The planted Friedkin-Johnsen rule: the role's whole position after reading the other's
    turn of round `read` (the other's position in `state.other`)."""
    rules, own, other = call.params, state.own, state.other
    if other is None or other == own or rules.susceptibility is None:
        return own
    susceptibility = rules.susceptibility
    if state.role == DISCUSSANT and state.pressured:
        susceptibility = min(1.0, susceptibility * rules.manipulation_gain)
    drift = susceptibility * (other - own) + rules.stubbornness * (state.start - own)
    statement = str(call.info.facts.get(STATEMENT, ""))
    u = call.uniform(call.model, call.system, statement, call.request.replicate, "fj", read)
    if drift == 0 or u >= min(1.0, abs(drift)):
        return own
    return min(float(SCALE_MAX), max(float(SCALE_MIN), own + math.copysign(1.0, drift)))


def _fj_turn(call: Call, state: _Role) -> str:
    """A turn under the planted rule: the position reached since its last turn, tagged by how
    it moved relative to the other's position."""
    before, now, other = state.said, state.own, state.other
    if other is None or now == before:
        category = "IGNORE"
    else:
        category = "ACCEPT" if abs(other - now) < abs(other - before) else "REJECT"
    return _said(call, state.role, now, category)


def _turn(call: Call) -> str:
    rules, state = call.params, _Role(call)
    if rules.susceptibility is not None:
        return _fj_turn(call, state)
    own, other = state.own, state.other
    rate = rules.discussant_rate if state.role == DISCUSSANT else rules.opponent_rate
    if state.role == DISCUSSANT and state.pressured:
        rate = min(1.0, rate * rules.manipulation_gain)
    moved = own if other is None else own + rate * (other - own)
    step = abs(moved - own)
    if other is not None and step >= rules.accept_step:
        category = "ACCEPT"
    elif other is not None and abs(other - own) >= rules.reject_gap:
        category = "REJECT"
    else:
        category = "IGNORE"
    if other is not None:
        moved, category = _planted(call, own, other, moved, category)
    return _said(call, state.role, moved, category)


def _said(call: Call, role: str, moved: float, category: str) -> str:
    argument = f"Here is how I weigh it now. (my position: {moved:.3f} of 6)"
    if role != DISCUSSANT and call.info.facts.get(MANIPULATIVE):
        argument = f"{argument} {_PRESSURE}"
    return json.dumps({"argument": argument, "category": category})


POPULATION = Population(
    DyadPopulation,
    rules={OPENING: _opening, TURN: _turn, RATING_NAME: _rating, OFF_THE_RECORD: _rating},
)
"""What `sim/population` answers the dyad's opening, turns and ratings with."""
