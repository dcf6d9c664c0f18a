"""A response cache in SQLite keyed by everything that changes a model's output.

Keys include the replicate index and the re-ask attempt, so sampled replicates differ while a
re-run (or a resumed run) replays exactly. The text is stored as the server sent it (think
blocks included) beside its reasoning field, so a changed think-tag rule re-splits cached
answers. Writes are committed at once (WAL, synchronous=NORMAL), so a killed run keeps every
answer it paid for.

Each answer records the conversation whose call produced it. Two conversations asking the same
call at the same time make it once (single flight): the second waits for the first's answer.
A call answered by another conversation's call (from the cache or in flight) is a *shared*
call; paired arms that share their common calls' seeds save exactly these.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path

from backchannel._sqlite import connect_readonly, damage, record_sound
from backchannel.backends._base import Backend
from backchannel.backends._replicas import current_conversation
from backchannel.backends._types import RawCompletion, Request, constraint_key
from backchannel.errors import RunDirectoryError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    finish_reason TEXT NOT NULL,
    created REAL NOT NULL,
    reasoning TEXT NOT NULL DEFAULT '',
    reasoning_tokens INTEGER NOT NULL DEFAULT 0,
    conversation TEXT NOT NULL DEFAULT ''
)
"""
# Columns added since the first cache files; older files gain them when opened.
_ADDED_COLUMNS = {
    "reasoning": "TEXT NOT NULL DEFAULT ''",
    "reasoning_tokens": "INTEGER NOT NULL DEFAULT 0",
    "conversation": "TEXT NOT NULL DEFAULT ''",
}


def cache_key(request: Request, endpoint: str) -> str:
    """The SHA-256 of the request's output-relevant fields and the endpoint.

    Reasoning effort, stop sequences, extra body fields, the max-tokens field and sampling
    left to the server enter the key only when set, so the keys of calls without them (and
    caches written before they existed) stay the same.
    """
    settings = request.settings
    fields: dict[str, object] = {
        "model": request.model,
        "endpoint": endpoint,
        "messages": [[m.role, m.content] for m in request.messages],
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "max_tokens": settings.max_tokens,
        "seed": request.seed,
        "constraint": constraint_key(request.constraint),
        "replicate": request.replicate,
        "attempt": request.attempt,
    }
    if settings.reasoning_effort is not None:
        fields["reasoning_effort"] = settings.reasoning_effort
    if settings.stop:
        fields["stop"] = list(settings.stop)
    if settings.extra_body:
        fields["extra_body"] = settings.extra_body
    if settings.max_tokens_field != "max_tokens":
        fields["max_tokens_field"] = settings.max_tokens_field
    if not settings.sampling:
        # temperature and top_p were not sent: the server's defaults decided
        fields["sampling"] = False
    payload = json.dumps(
        fields,
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(payload.encode()).hexdigest()


class ResponseCache:
    """The SQLite file behind the cache; one per run directory unless shared on purpose."""

    def __init__(self, path: Path) -> None:
        self.path = path
        if path.exists():
            problem = damage(path)
            if problem is not None:
                raise RunDirectoryError(damaged_cache_message(path, problem))
        try:
            self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA busy_timeout=10000")
            self._db.execute(_SCHEMA)
            present = {row[1] for row in self._db.execute("PRAGMA table_info(responses)")}
            for column, declaration in _ADDED_COLUMNS.items():
                if column not in present:
                    try:
                        self._db.execute(f"ALTER TABLE responses ADD COLUMN {column} {declaration}")
                    except sqlite3.OperationalError as error:
                        # Another process sharing this cache added it first.
                        if "duplicate column" not in str(error):
                            raise
        except sqlite3.Error as error:
            raise RunDirectoryError(
                f"cannot write the response cache {path} ({error}); the run directory must be "
                "writable"
            ) from None

    def get(self, key: str) -> RawCompletion | None:
        row = self._db.execute(
            "SELECT text, prompt_tokens, completion_tokens, finish_reason, reasoning, "
            "reasoning_tokens, conversation FROM responses WHERE key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        return RawCompletion(
            text=row[0],
            prompt_tokens=row[1],
            completion_tokens=row[2],
            finish_reason=row[3],
            cached=True,
            reasoning=row[4],
            reasoning_tokens=row[5],
            origin=row[6] or None,
        )

    def put(self, key: str, model: str, completion: RawCompletion) -> None:
        """Store an answer, with the conversation whose call made it (if one is running)."""
        self._db.execute(
            "INSERT OR REPLACE INTO responses "
            "(key, model, text, prompt_tokens, completion_tokens, finish_reason, created, "
            "reasoning, reasoning_tokens, conversation) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                model,
                completion.text,
                completion.prompt_tokens,
                completion.completion_tokens,
                completion.finish_reason,
                time.time(),
                completion.reasoning,
                completion.reasoning_tokens,
                current_conversation() or "",
            ),
        )

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        self._db.close()
        record_sound(self.path)  # so read commands need not check the whole file again


def damaged_cache_message(path: Path, problem: str) -> str:
    return (
        f"the response cache {path} {problem}; it was left untouched. Move it away and run "
        "again (answers in it are asked anew; stored conversations are kept)"
    )


def cache_totals(path: Path) -> tuple[int, int, int] | None:
    """(answers, prompt tokens, completion tokens) stored in a cache file, read-only; None if
    there is no cache there."""
    if not path.exists():
        return None
    problem = damage(path)
    if problem is not None:
        raise RunDirectoryError(damaged_cache_message(path, problem))
    db = connect_readonly(path)
    try:
        row = db.execute(
            "SELECT COUNT(*), COALESCE(SUM(prompt_tokens), 0), "
            "COALESCE(SUM(completion_tokens), 0) FROM responses"
        ).fetchone()
    except sqlite3.OperationalError:
        return None
    finally:
        db.close()
    return int(row[0]), int(row[1]), int(row[2])


@dataclass
class SharedCalls:
    """How many of one conversation's calls another conversation's call answered."""

    count: int = 0


_shared: ContextVar[SharedCalls | None] = ContextVar("backchannel_shared_calls", default=None)


@contextlib.contextmanager
def count_shared_calls() -> Iterator[SharedCalls]:
    """Count the shared calls made inside (and in tasks started inside)."""
    tally = SharedCalls()
    token = _shared.set(tally)
    try:
        yield tally
    finally:
        _shared.reset(token)


def _count_shared() -> None:
    tally = _shared.get()
    if tally is not None:
        tally.count += 1


@dataclass
class _Flight:
    """A call in flight: the conversation that makes it, and its answer once it has one."""

    conversation: str | None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    answer: RawCompletion | None = None


class CachedBackend:
    """Answers from the cache when it can; stores every successful answer otherwise; makes a
    call that is already in flight only once."""

    def __init__(self, inner: Backend, cache: ResponseCache, identity: str | None = None) -> None:
        """`identity` names the endpoint in cache keys when its URL alone does not say how
        requests are sent (e.g. the constrained-decoding mode changes the request body)."""
        self._inner = inner
        self._cache = cache
        self._identity = identity
        self._flights: dict[str, _Flight] = {}

    @property
    def endpoint(self) -> str:
        return self._inner.endpoint

    async def generate(self, request: Request) -> RawCompletion:
        key = cache_key(request, self._identity or self._inner.endpoint)
        me = current_conversation()
        while True:
            hit = self._cache.get(key)
            if hit is not None:
                if hit.origin is not None and hit.origin != me:
                    _count_shared()
                return hit
            flight = self._flights.get(key)
            if flight is None:
                break
            await flight.done.wait()
            if flight.answer is not None:
                if flight.conversation != me:
                    _count_shared()
                return replace(flight.answer, cached=True, origin=flight.conversation)
            # The call failed or was cancelled where it was made: ask again (maybe here).
        flight = self._flights[key] = _Flight(me)
        try:
            completion = await self._inner.generate(request)
            self._cache.put(key, request.model, completion)
            flight.answer = completion
            return completion
        finally:
            del self._flights[key]
            flight.done.set()

    async def aclose(self) -> None:
        await self._inner.aclose()
