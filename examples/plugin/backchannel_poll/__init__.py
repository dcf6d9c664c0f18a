"""A group poll, written as a third-party backchannel paradigm.

Agents vote yes or no on a statement in private (checkpoint 0), discuss it in public for T
rounds, and vote again in private after every round. The metrics (`results.py`: typed, one row
per cell of the run's design) say how the private yes share moved and how many agents changed
their vote; unreadable ballots are counted, never guessed.
A judge can label the public turns by their stance (`backchannel judge`, `agree`). On the
simulated population (`--model sim/population`) its agents follow a rule with a known answer
(`POPULATION`, parameters under `population: {poll: ...}`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

import backchannel as bc
from backchannel.analysis import rows_frame
from backchannel.backends import Population, PopulationCall
from backchannel_poll.results import PollMetrics, poll_metrics
from backchannel_poll.view import VIEW
from backchannel_poll.votes import ballots, vote_changes

__all__ = ["POPULATION", "Poll", "PollMetrics", "PollSettings", "ballots", "vote_changes"]

VOTE = bc.LabelSet(("yes", "no"))
PERSONAS = (
    ("Alice", "careful accountant"),
    ("Bob", "retired teacher"),
    ("Carol", "software engineer"),
    ("David", "nurse on night shifts"),
    ("Erin", "small-business owner"),
    ("Frank", "university student"),
)


@cache
def _judge_prompt() -> str:
    return (resources.files("backchannel_poll.prompts") / "judge_stance.txt").read_text().strip()


STANCE = bc.JudgeTask(
    name="stance",
    labels=("yes", "no", "unclear"),
    prompt=lambda t: _judge_prompt().format(statement=t.reference, speaker=t.speaker, text=t.text),
)
"""A public turn argues for the statement, against it, or neither (model judges only)."""


def _stance_targets(tables: bc.RunTables) -> Callable[[Mapping[Any, Any], Mapping[str, Any]], Any]:
    """Every ok public turn of a finished conversation, judged against the statement polled."""

    def choose(event: Mapping[Any, Any], meta: Mapping[str, Any]) -> bc.Pick | None:
        if event["kind"] != "message" or event["name"] != "turn" or event["status"] != "ok":
            return None
        return bc.Pick(STANCE, str(event["text"]), meta["item"]["statement"])

    return choose


class Statement(BaseModel):
    """One item: a statement the group is polled on."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(pattern=r"^[^/]+$", description="Stable item id (no '/').")
    text: str = Field(min_length=1, description="The statement.")


class PollSettings(BaseModel):
    """Every field may also be a factor, except `statements` (the items)."""

    model_config = ConfigDict(extra="forbid")
    model: str = Field("local/smollm2", description="Model of every agent.")
    agents: int = Field(3, ge=2, le=len(PERSONAS), description="Number of agents.")
    rounds: int = Field(2, ge=1, description="Rounds of public discussion.")
    temperature: float = Field(0.7, ge=0, le=2, description="Temperature of public turns.")
    max_tokens: int = Field(96, ge=1, description="Maximum tokens of a public turn.")
    statements: list[Statement] = Field(min_length=1, description="The items.")


class PollPopulation(BaseModel):
    """The simulated voters: each leans yes with chance `lean` before the discussion and changes
    its vote after each round with chance `switch`, whatever it heard. So the yes share at
    checkpoint r is 1/2 + (lean - 1/2)(1 - 2 switch)^r, and the share of agents whose last vote
    differs from their first, after T rounds, is (1 - (1 - 2 switch)^T) / 2."""

    model_config = ConfigDict(extra="forbid")
    lean: float = Field(0.5, ge=0, le=1, description="Chance an agent leans yes at first.")
    switch: float = Field(
        0.1, ge=0, le=1, description="Chance an agent changes its vote after each round."
    )


def _lean(call: PopulationCall[PollPopulation], rounds: int) -> str:
    """The agent's vote once `rounds` rounds are over: its first lean, flipped by every switch
    (draws fixed per model, agent, statement, replicate and round)."""
    who = (call.model, call.info.agent, call.info.item_id, call.request.replicate)
    yes = call.uniform(*who, "lean") < call.params.lean
    for r in range(1, rounds + 1):
        yes ^= call.uniform(*who, "switch", r) < call.params.switch
    return "yes" if yes else "no"


def _ballot(call: PopulationCall[PollPopulation]) -> str:
    """A private vote at checkpoint r (the round its call information names)."""
    return _lean(call, call.info.round or 0)


def _turn(call: PopulationCall[PollPopulation]) -> str:
    """A public turn of round r says the vote the agent held after round r - 1."""
    return f"For now I would vote {_lean(call, (call.info.round or 1) - 1)}."


def _stance(call: PopulationCall[PollPopulation]) -> str:
    """The stance judge's label of a turn: the vote it says, else unclear."""
    text = str(call.info.facts.get("text", ""))
    for label in ("yes", "no"):
        if text.endswith(f"vote {label}."):
            return label
    return "unclear"


POPULATION = Population(
    PollPopulation, rules={"vote": _ballot, "turn": _turn}, judges={"stance": _stance}
)
"""What `sim/population` answers the poll's ballots, turns and stance judge with."""


class Poll(bc.Paradigm[PollSettings]):
    """N agents discuss a statement; each votes privately before and after every round."""

    name = "poll"
    view = VIEW
    Settings = PollSettings
    prompt_package = "backchannel_poll.prompts"
    fixed_settings = frozenset({"statements"})
    judging = bc.Judging((STANCE,), _stance_targets)
    population = POPULATION

    def items(self, settings: PollSettings, seed: int) -> list[bc.Item]:
        return [bc.Item(s.id, {"statement": s.text}) for s in settings.statements]

    def estimate(
        self, settings: PollSettings, item: bc.Item, replicate: int = 0
    ) -> bc.CallEstimate:
        n, t = settings.agents, settings.rounds
        turns, votes = n * t, n * (t + 1)
        return bc.CallEstimate(
            {settings.model: turns + votes},
            prompt_tokens=(turns + votes) * 120,
            completion_tokens=turns * settings.max_tokens + votes * 4,
        )

    async def run(self, ctx: bc.ConversationContext[PollSettings]) -> None:
        settings = ctx.settings
        statement = ctx.spec.item.payload["statement"]
        turn_settings = bc.GenerationSettings(settings.temperature, max_tokens=settings.max_tokens)
        agents = [
            bc.Agent(
                name,
                "voter",
                settings.model,
                system=self.template("system.txt").format(name=name, persona=persona).strip(),
                settings=turn_settings,
            )
            for name, persona in PERSONAS[: settings.agents]
        ]
        room = ctx.room(
            agents, preamble=self.template("preamble.txt").format(statement=statement).strip()
        )
        ballot = self.template("vote.txt").format(statement=statement).strip()
        room.checkpoint(ballot, name="vote", constraint=VOTE)  # checkpoint 0
        for round_number in range(1, settings.rounds + 1):
            turn = self.template("turn.txt").format(round=round_number).strip()
            await room.run_round(turn)  # the room numbers the round
            room.checkpoint(ballot, name="vote", constraint=VOTE)  # checkpoint r

    def metrics(self, tables: bc.RunTables, options: bc.AnalysisOptions) -> PollMetrics:
        return poll_metrics(tables)

    def report(self, tables: bc.RunTables, metrics: PollMetrics, report: bc.Report) -> None:
        report.section(
            "Private votes", "The share of readable ballots saying yes, per cell and checkpoint."
        )
        report.metrics(
            {"conversations": metrics.conversations, "unreadable votes": metrics.unreadable_votes}
        )
        report.table("by_cell", rows_frame(metrics.by_cell), "Vote changes, one row per cell.")
        report.table(
            "yes_share_by_checkpoint",
            rows_frame(metrics.yes_share_by_checkpoint),
            "Checkpoint 0 is before the discussion; checkpoint r after round r.",
        )
