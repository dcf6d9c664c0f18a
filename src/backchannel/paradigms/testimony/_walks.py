"""Walks: every sequence of moves that the accounts the agents read allow.

An agent never sees a move number or the chain's length. What it reads, for each role, is an
account: the role's windows in the role's own order ("I entered while the ball was in the A.
I saw Kim move it from the A to the B. When I left ... Later I came back while ..."). Nothing
orders one role's windows against another's. A walk is a start container and a sequence of
moves (actor, from, to) in which every window of every account is a contiguous stretch, each
role's windows in its order and not overlapping, every move seen by at least one window (the
people together saw every move) and no role seeing every move (nobody saw all of them). The
verifier enumerates the walks to judge an environment from these texts alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from backchannel.paradigms.testimony._chain import Chain
from backchannel.paradigms.testimony._windows import Window


@dataclass(frozen=True, slots=True)
class Move:
    """One move as a text tells it: who moved the object, from where, to where."""

    actor: str
    before: str
    after: str


@dataclass(frozen=True, slots=True)
class Fragment:
    """One window as its text tells it: where the object was on entering, the moves seen."""

    start: str
    moves: tuple[Move, ...] = ()

    @property
    def end(self) -> str:
        return self.moves[-1].after if self.moves else self.start


Account = tuple[Fragment, ...]
"""One role's windows, in the role's own order."""


@dataclass(frozen=True, slots=True)
class Walk:
    """A start container and the moves after it."""

    start: str
    moves: tuple[Move, ...]

    @property
    def end(self) -> str:
        return self.moves[-1].after if self.moves else self.start


def fragment(chain: Chain, window: Window) -> Fragment:
    """The text of one window: its start container and the moves it saw."""
    nodes = chain.nodes
    moves = tuple(
        Move(chain.actor(t), nodes[t - 1].container, nodes[t].container) for t in window.moves
    )
    return Fragment(nodes[window.start].container, moves)


def accounts_of(chain: Chain, windows: Mapping[str, Sequence[Window]]) -> dict[str, Account]:
    """Every role's account, as its observation and testimony texts tell it."""
    return {role: tuple(fragment(chain, w) for w in ws) for role, ws in windows.items()}


def chain_walk(chain: Chain) -> Walk:
    """The story's own chain as a walk."""
    return fragment_walk(fragment(chain, Window(0, chain.moves)))


def fragment_walk(found: Fragment) -> Walk:
    return Walk(found.start, found.moves)


def walks(accounts: Mapping[str, Sequence[Fragment]], limit: int = 64) -> set[Walk]:
    """Every walk the accounts allow (at most `limit` distinct ones; more are not listed)."""
    search = _Search(accounts)
    found: set[Walk] = set()
    for start in search.starts():
        for moves in search.suffixes(start, search.begin()):
            found.add(Walk(start, moves))
            if len(found) >= limit:
                return found
    return found


def endpoints(accounts: Mapping[str, Sequence[Fragment]]) -> set[str]:
    """The containers the allowed walks end in (empty: no walk fits every account)."""
    search = _Search(accounts)
    ends: set[str] = set()
    for start in search.starts():
        ends |= search.ends(start, search.begin())
    return ends


State = tuple[tuple[int, ...], tuple[int, ...], int]
"""(windows begun per role, moves seen in its open window or -1, bit mask of roles that missed
a move so far)."""


class _Search:
    """The walks of one set of accounts, found depth first with the states memoised.

    A state is where the object is and `State`; the moves that can follow depend on nothing
    else, so each state is searched once.
    """

    def __init__(self, accounts: Mapping[str, Sequence[Fragment]]) -> None:
        self.table = tuple(tuple(accounts[r]) for r in sorted(accounts))
        self.everyone = (1 << len(self.table)) - 1
        self._ends: dict[tuple[str, State], frozenset[str]] = {}
        self._suffixes: dict[tuple[str, State], frozenset[tuple[Move, ...]]] = {}

    def starts(self) -> list[str]:
        return sorted({account[0].start for account in self.table if account})

    def begin(self) -> State:
        return (0,) * len(self.table), (-1,) * len(self.table), 0

    def ends(self, here: str, state: State) -> frozenset[str]:
        key = (here, state)
        found = self._ends.get(key)
        if found is None:
            result: set[str] = set()
            for step in self._steps(here, state):
                result |= {here} if step is None else self.ends(step[0].after, step[1])
            found = self._ends[key] = frozenset(result)
        return found

    def suffixes(self, here: str, state: State) -> frozenset[tuple[Move, ...]]:
        key = (here, state)
        found = self._suffixes.get(key)
        if found is None:
            result: set[tuple[Move, ...]] = set()
            for step in self._steps(here, state):
                if step is None:
                    result.add(())
                else:
                    result |= {(step[0], *rest) for rest in self.suffixes(step[0].after, step[1])}
            found = self._suffixes[key] = frozenset(result)
        return found

    def _steps(self, here: str, state: State) -> Iterator[tuple[Move, State] | None]:
        """Each way on from here: None to end the walk here, else the next move and state."""
        table = self.table
        placed, progress, missed = state
        open_roles = [r for r, p in enumerate(progress) if p >= 0]
        forced = {table[r][placed[r] - 1].moves[progress[r]] for r in open_roles}
        if len(forced) > 1:
            return  # two roles present at once would have seen different moves
        move = next(iter(forced), None)
        for placed_now, progress_now, chosen in self._openings(here, placed, progress, 0, move):
            if chosen is None:
                done = all(placed_now[r] == len(table[r]) for r in range(len(table)))
                if done and missed == self.everyone:
                    yield None
                continue
            seen = 0
            advanced = list(progress_now)
            for r, p in enumerate(progress_now):
                if p < 0:
                    continue
                seen |= 1 << r
                advanced[r] += 1
                if advanced[r] == len(table[r][placed_now[r] - 1].moves):
                    advanced[r] = -1  # the window saw all its moves: the role leaves
            yield chosen, (placed_now, tuple(advanced), missed | (self.everyone & ~seen))

    def _openings(
        self,
        here: str,
        placed: tuple[int, ...],
        progress: tuple[int, ...],
        role: int,
        move: Move | None,
    ) -> Iterator[tuple[tuple[int, ...], tuple[int, ...], Move | None]]:
        """Every way the roles from `role` on may enter here: each either waits or begins its
        next window (a window without moves begins and ends at once, and the role may enter
        again). Everyone present sees the same next move, `move` (None: nobody present yet)."""
        table = self.table
        if role == len(table):
            yield placed, progress, move
            return
        yield from self._openings(here, placed, progress, role + 1, move)
        index = placed[role]
        if progress[role] >= 0 or index == len(table[role]) or table[role][index].start != here:
            return
        window = table[role][index]
        more = list(placed)
        more[role] += 1
        if not window.moves:
            yield from self._openings(here, tuple(more), progress, role, move)
        elif move is None or window.moves[0] == move:
            now = list(progress)
            now[role] = 0
            yield from self._openings(here, tuple(more), tuple(now), role + 1, window.moves[0])
