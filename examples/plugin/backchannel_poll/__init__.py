"""A group poll, written as a third-party backchannel paradigm.

Agents vote yes or no on a statement in private (checkpoint 0), discuss it in public for T
rounds, and vote again in private after every round. The metrics say how the private yes share
moved and how many agents changed their vote; unreadable ballots are counted, never guessed.
A judge can label the public turns by their stance (`backchannel judge`, `agree`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from importlib import resources
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

import backchannel as bc
from backchannel_poll.view import VIEW

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


class Poll(bc.Paradigm[PollSettings]):
    """N agents discuss a statement; each votes privately before and after every round."""

    name = "poll"
    view = VIEW
    Settings = PollSettings
    prompt_package = "backchannel_poll.prompts"
    fixed_settings = frozenset({"statements"})
    judging = bc.Judging((STANCE,), _stance_targets)

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

    def metrics(self, tables: bc.RunTables, options: bc.AnalysisOptions) -> dict[str, Any]:
        votes = _votes(tables)
        readable = votes[votes["status"] == "ok"]
        by_checkpoint = [
            {
                "checkpoint": int(group["round"].iloc[0]),
                "yes_share": float((group["vote"] == "yes").mean()),
                "n": len(group),
            }
            for _, group in readable.groupby("round", sort=True)
        ]
        pairs = vote_changes(tables)
        changed = pairs["changed"].mean() if len(pairs) else None
        return {
            "conversations": int((tables.conversations["status"] == "done").sum()),
            "yes_share_by_checkpoint": by_checkpoint,
            "vote_change_rate": None if changed is None else float(changed),
            "vote_change_n": len(pairs),
            "unreadable_votes": int((votes["status"] != "ok").sum()),
        }

    def report(self, tables: bc.RunTables, metrics: dict[str, Any], report: bc.Report) -> None:
        report.section("Private votes", "The share of readable ballots saying yes, by checkpoint.")
        report.metrics(
            {
                "conversations": metrics["conversations"],
                "vote change rate": metrics["vote_change_rate"],
                "unreadable votes": metrics["unreadable_votes"],
            }
        )
        report.table(
            "yes_share_by_checkpoint",
            pd.DataFrame(metrics["yes_share_by_checkpoint"]),
            "Checkpoint 0 is before the discussion; checkpoint r after round r.",
        )


def vote_changes(tables: bc.RunTables) -> pd.DataFrame:
    """Per agent of each finished conversation: its first and last readable vote (at two
    different checkpoints) and whether it changed; the metrics' change rate is their mean."""
    votes = _votes(tables)
    readable = votes[votes["status"] == "ok"]
    first = readable.loc[readable.groupby(["conversation_id", "agent"])["round"].idxmin()]
    last = readable.loc[readable.groupby(["conversation_id", "agent"])["round"].idxmax()]
    pairs = first.merge(last, on=["conversation_id", "agent"], suffixes=("_first", "_last"))
    pairs = pairs[pairs["round_first"] < pairs["round_last"]]
    return pairs.assign(changed=pairs["vote_first"] != pairs["vote_last"])


def _votes(tables: bc.RunTables) -> pd.DataFrame:
    """One row per ballot of a finished conversation, with its parsed vote (None if unreadable)."""
    done = tables.conversations.loc[tables.conversations["status"] == "done", "conversation_id"]
    events = tables.events
    votes = events[(events["kind"] == "probe") & (events["name"] == "vote")]
    votes = votes[votes["conversation_id"].isin(done)].copy()
    votes["vote"] = votes["value"].map(lambda v: None if v in (None, "") else str(v).strip('"'))
    return votes
