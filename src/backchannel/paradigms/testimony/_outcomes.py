"""Checkpoint outcomes of a whole run at once: each conversation's roles and thresholds are read
from its meta in one pass, the votes are classified as arrays, and the votes each group counts
are looked up by integer keys and counted with `bincount` (no frame or row dict per
conversation). The rows and their order are those `_metrics.checkpoint_outcomes` documents."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from backchannel.analysis import RunTables
from backchannel.paradigms.testimony._phases import label_of, participant_checkpoints, round_of
from backchannel.paradigms.testimony._votes import VOTE_KINDS, vote_kinds

BASE = (
    "conversation_id",
    "item_id",
    "model",
    "condition",
    "intervention",
    "deception",
    "key_message_kind",
    "source",
)
COLUMNS = [*BASE, "group", "checkpoint", "voters", *VOTE_KINDS, "outcome"]
TRUE, DECOY, FAILED = (VOTE_KINDS.index(k) for k in ("true", "decoy", "failed"))


def model_label(meta: dict[str, Any]) -> str:
    """The story roles' models, sorted and joined with `+` (observers left out)."""
    models = sorted({a["model"] for a in meta.get("agents", []) if a["role"] != "observer"})
    return "+".join(models)


@dataclass
class Stories:
    """The conversations that have outcomes (an endpoint and at least one vote), in stored
    order: their base columns, story, thresholds and the names of their two voting groups."""

    base: dict[str, list[Any]] = field(default_factory=lambda: {c: [] for c in BASE})
    endpoint: list[Any] = field(default_factory=list)
    decoy: list[Any] = field(default_factory=list)
    majority: list[Any] = field(default_factory=list)
    rounds: list[int] = field(default_factory=list)
    analysed: list[list[str]] = field(default_factory=list)
    observers: list[list[str]] = field(default_factory=list)
    # The groups and model label of each agents list seen (conversations storing the same meta
    # share it), worked out once; the lists are kept alive with them so their ids stay theirs.
    _cast: dict[int, tuple[list[Any], list[str], list[str], str]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def __len__(self) -> int:
        return len(self.endpoint)

    def add(self, conversation_id: Any, item_id: Any, meta: dict[str, Any]) -> None:
        self.endpoint.append(meta["endpoint"])
        self.decoy.append(meta["decoy"])
        self.majority.append(meta["majority"])
        agents = meta["agents"]
        cast = self._cast.get(id(agents))
        if cast is None or cast[0] is not agents:
            roles = {a["name"]: a["role"] for a in agents}
            cast = self._cast[id(agents)] = (
                agents,
                [n for n, r in roles.items() if r in ("second_key", "member")],
                [n for n, r in roles.items() if r == "observer"],
                model_label(meta),
            )
        self.analysed.append(cast[1])
        self.observers.append(cast[2])
        values = (
            conversation_id,
            item_id,
            cast[3],
            meta["condition"],
            meta["intervention"],
            meta["deception"],
            meta["key_message_kind"],
            (meta.get("environment") or {}).get("source", "hitom"),
        )
        for column, value in zip(BASE, values, strict=True):
            self.base[column].append(value)
        self.rounds.append(int(meta["rounds"]))


def outcome_frame(tables: RunTables) -> pd.DataFrame:
    """One row per conversation, group and checkpoint (`COLUMNS`), as the per-conversation
    definition gives them, in the same order."""
    events = tables.core_events
    chosen = (events["kind"] == "probe") & (events["name"] == "vote") & tables.done_events()
    votes = events.loc[chosen, ["conversation_id", "agent", "round", "status", "value"]]
    voted = set(votes["conversation_id"].tolist())
    done = tables.done_conversations()
    stories = Stories()
    for cid, item, meta in zip(
        done["conversation_id"].tolist(),
        done["item_id"].tolist(),
        done["meta"].tolist(),
        strict=True,
    ):
        if "endpoint" in meta and cid in voted:
            stories.add(cid, item, meta)
    if not len(stories):
        return pd.DataFrame([], columns=COLUMNS)
    return _Counter(stories, votes).frame()


class _Counter:
    """The votes of the stories keyed by (story, agent, round) as one integer each, and the
    rows of each group and checkpoint counted from them."""

    def __init__(self, stories: Stories, votes: pd.DataFrame) -> None:
        self.stories = stories
        story = pd.Index(stories.base["conversation_id"]).get_indexer(votes["conversation_id"])
        votes = votes[story >= 0].assign(story=story[story >= 0])
        at = votes["story"].to_numpy()
        kinds = vote_kinds(
            votes["value"],
            votes["status"],
            np.asarray(stories.endpoint, dtype=object)[at],
            np.asarray(stories.decoy, dtype=object)[at],
        )
        # Names: the votes' agents and every analysed or observing role, as one code each.
        members = [stories.analysed, stories.observers]
        names = [str(a) for a in votes["agent"].tolist()]
        names += [n for group in members for ns in group for n in ns]
        codes, self.names = pd.factorize(pd.Series(names, dtype=object))
        self.width = len(self.names)
        numbers = votes["round"].astype(np.int64).to_numpy()
        self.top = int(max(numbers.max(initial=0), 2 * max(stories.rounds) + 1)) + 1
        keys = self._key(at, codes[: len(votes)], numbers)
        # A later vote of the same agent and round replaces an earlier one.
        last = ~pd.Series(keys).duplicated(keep="last").to_numpy()
        self.index = pd.Index(keys[last])
        self.kinds = kinds[last]
        self.vote_story, self.vote_number = at[last], numbers[last]
        self.vote_code = codes[: len(votes)][last]
        rest = codes[len(votes) :]
        self.groups = []
        for group in members:
            sizes = np.array([len(ns) for ns in group], dtype=np.int64)
            owner = np.repeat(np.arange(len(group), dtype=np.int64), sizes)
            self.groups.append((owner, rest[: len(owner)], sizes))
            rest = rest[len(owner) :]

    def _key(self, story: np.ndarray, code: np.ndarray, number: np.ndarray) -> np.ndarray:
        return (story.astype(np.int64) * self.width + code) * self.top + number

    def counts(self, group: int, rows: np.ndarray, numbers: np.ndarray) -> np.ndarray:
        """Per row (a story `rows[i]` at round `numbers[i]`): how many of the group's names
        voted each kind there, a missing vote counted as failed."""
        _, code, sizes = self.groups[group]
        starts = np.concatenate([[0], np.cumsum(sizes)])[rows]
        each = sizes[rows]
        which = np.repeat(np.arange(len(rows)), each)
        offsets = np.arange(each.sum()) - np.repeat(np.cumsum(each) - each, each)
        names = code[np.repeat(starts, each) + offsets]
        found = self.index.get_indexer(self._key(rows[which], names, numbers[which]))
        kinds = np.where(found >= 0, self.kinds[found], FAILED)
        flat = np.bincount(which * len(VOTE_KINDS) + kinds, minlength=len(rows) * len(VOTE_KINDS))
        return flat.reshape(len(rows), len(VOTE_KINDS))

    def frame(self) -> pd.DataFrame:
        stories = self.stories
        parts = [self._participants()]
        asked = self._asked()
        if len(asked[0]):
            parts += self._observers(*asked)
        story = np.concatenate([p["story"] for p in parts])
        order = np.lexsort(
            (
                np.concatenate([p["sub"] for p in parts]),
                np.concatenate([p["number"] for p in parts]),
                np.concatenate([p["section"] for p in parts]),
                story,
            )
        )
        story = story[order]
        data: dict[str, Any] = {
            c: np.asarray(stories.base[c], dtype=object)[story].tolist() for c in BASE
        }
        data["group"] = np.concatenate([p["group"] for p in parts])[order].tolist()
        numbers = np.concatenate([p["number"] for p in parts])[order]
        labels = {int(n): label_of(int(n)) for n in np.unique(numbers)}
        data["checkpoint"] = [labels[n] for n in numbers.tolist()]
        data["voters"] = np.concatenate([p["voters"] for p in parts])[order]
        counts = np.concatenate([p["counts"] for p in parts])[order]
        for i, kind in enumerate(VOTE_KINDS):
            data[kind] = counts[:, i]
        data["outcome"] = np.concatenate([p["outcome"] for p in parts])[order].tolist()
        return pd.DataFrame(data, columns=COLUMNS)

    def _participants(self) -> dict[str, np.ndarray]:
        """The analysed four at T0, T1, R1..RK of their story."""
        stories = self.stories
        # The checkpoints of each distinct number of rounds, worked out once.
        kinds, rounds = pd.factorize(np.asarray(stories.rounds, dtype=np.int64))
        checkpoints = [
            np.array([round_of(label) for label in participant_checkpoints(int(k))], np.int64)
            for k in rounds
        ]
        sizes = np.array([len(c) for c in checkpoints], dtype=np.int64)[kinds]
        story = np.repeat(np.arange(len(stories), dtype=np.int64), sizes)
        flat = np.concatenate([np.zeros(0, np.int64), *checkpoints])
        starts = np.cumsum([len(c) for c in checkpoints]) - [len(c) for c in checkpoints]
        offset = np.arange(len(story), dtype=np.int64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        numbers = flat[np.asarray(starts, dtype=np.int64)[kinds][story] + offset]
        thresholds = np.array([m["participants"] for m in stories.majority])[story]
        counts = self.counts(0, story, numbers)
        voters = np.array([len(n) for n in stories.analysed], dtype=np.int64)[story]
        return self._part(story, 0, numbers, 0, "participants", voters, counts, thresholds)

    def _asked(self) -> tuple[np.ndarray, np.ndarray]:
        """(story, round) of every round at which one of a story's observers voted, sorted."""
        owner, code, _ = self.groups[1]
        observer = pd.Index(owner * self.width + code)  # a story's names are distinct
        mine = observer.get_indexer(self.vote_story * self.width + self.vote_code) >= 0
        pairs = np.unique(self.vote_story[mine] * self.top + self.vote_number[mine])
        return pairs // self.top, pairs % self.top

    def _observers(self, story: np.ndarray, numbers: np.ndarray) -> list[dict[str, np.ndarray]]:
        """The observers at each round they voted, and all seven there (the analysed four at
        the same checkpoint: after Ok, at Rk)."""
        majority = self.stories.majority
        thresholds = {
            int(s): (majority[s]["observers"], majority[s]["all"]) for s in np.unique(story)
        }
        seen = self.counts(1, story, numbers)
        at = np.where((numbers < 2) | (numbers % 2 == 0), numbers, numbers - 1)
        together = self.counts(0, story, at) + seen
        analysed, observers = (sizes[story] for _, _, sizes in self.groups)
        observing = np.array([thresholds[s][0] for s in story.tolist()])
        everyone = np.array([thresholds[s][1] for s in story.tolist()])
        return [
            self._part(story, 1, numbers, 0, "observers", observers, seen, observing),
            self._part(story, 1, numbers, 1, "all", analysed + observers, together, everyone),
        ]

    @staticmethod
    def _part(
        story: np.ndarray,
        section: int,
        numbers: np.ndarray,
        sub: int,
        group: str,
        voters: np.ndarray,
        counts: np.ndarray,
        thresholds: np.ndarray,
    ) -> dict[str, np.ndarray]:
        truth = counts[:, TRUE] >= thresholds
        decoy = counts[:, DECOY] >= thresholds
        outcome = np.where(truth, "truth", np.where(decoy, "decoy", "none")).astype(object)
        n = len(story)
        return {
            "story": story,
            "section": np.full(n, section),
            "number": numbers,
            "sub": np.full(n, sub),
            "group": np.full(n, group, dtype=object),
            "voters": voters,
            "counts": counts,
            "outcome": outcome,
        }
