"""The verifier: the conditions every environment must meet, each failure named.

(a) partial observability: no role observes every move, and no text gives a move's position;
(d) exactly two roles observe the final move: the key and the second-key role;
(c) overlap: some move is observed by its actor and by another role;
(b) information sufficiency, judged from the texts the agents read (see `_walks`): every walk
    the five honest accounts allow ends in lm; some three roles settle it; no two roles do. A
    set of roles settles the story when its windows see every move of the chain between them
    and every walk its accounts allow on their own ends in lm.
Also: five distinct roles, actors observe their own moves, one message per role (two direct,
three broadcast), honest messages report only what their sender saw, and the false message of
C1 points to the decoy l(m-1) and is the key role's.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from itertools import combinations

from backchannel.paradigms.testimony._chain import Chain
from backchannel.paradigms.testimony._environment import Environment
from backchannel.paradigms.testimony._walks import Account, accounts_of, endpoints
from backchannel.paradigms.testimony._windows import Window, observed_moves, observed_nodes

ROLES = 5
MIN_MOVES = 3
# A move's position must never be given: no digits and no ordinal words.
_POSITION = re.compile(
    r"\d|\b(first|second|third|fourth|fifth|sixth|seventh|eighth|last|final|"
    r"penultimate|initial|move number)\b",
    re.IGNORECASE,
)
# The conditions in the order they are checked; a rejection names the first that fails.
RULES = (
    "fewer than 3 moves",
    "not 5 roles",
    "windows outside the chain",
    "an actor misses its own move",
    "(a) a role observes every move",
    "(d) not exactly the key and second-key roles observe the final move",
    "(c) no move observed by its actor and another role",
    "(b) the honest accounts do not settle the endpoint",
    "(b) no three roles settle the endpoint",
    "(b) two roles already settle the endpoint",
)


def check_chain(chain: Chain) -> list[str]:
    problems = []
    if chain.moves < MIN_MOVES:
        plural = "" if chain.moves == 1 else "s"
        problems.append(
            f"the chain has {chain.moves} move{plural}; at least {MIN_MOVES} are needed"
        )
    if len(chain.roles) != ROLES:
        problems.append(f"the story has {len(chain.roles)} named roles; {ROLES} are needed")
    return problems


def covers(windows: Mapping[str, Sequence[Window]], roles: Sequence[str], moves: int) -> bool:
    """Whether the roles' windows together observe every move 1..m."""
    seen: set[int] = set()
    for role in roles:
        seen |= observed_moves(windows[role])
    return seen >= set(range(1, moves + 1))


def final_observers(windows: Mapping[str, Sequence[Window]], moves: int) -> list[str]:
    return [role for role, ws in windows.items() if moves in observed_moves(ws)]


def settles(
    chain: Chain,
    windows: Mapping[str, Sequence[Window]],
    accounts: Mapping[str, Account],
    roles: Sequence[str],
) -> bool:
    """Whether these roles settle the story: between them they see every move, and every walk
    their accounts allow on their own ends in lm."""
    if not covers(windows, roles, chain.moves):
        return False
    return endpoints({r: accounts[r] for r in roles}) == {chain.endpoint}


def _places(containers: Collection[str]) -> str:
    named = [f"the {c}" for c in sorted(containers)]
    return ", ".join(named[:-1]) + (" or " if len(named) > 1 else "") + named[-1]


def check_sufficiency(chain: Chain, windows: Mapping[str, Sequence[Window]]) -> list[str]:
    """(b), judged from the accounts as the agents read them (no move numbers, no length)."""
    accounts = accounts_of(chain, windows)
    ends = endpoints(accounts)
    if ends != {chain.endpoint}:
        found = _places(ends) if ends else "nowhere (no walk fits them all)"
        return [
            "(b) the honest accounts do not settle the endpoint: the walks they allow end in "
            + found
        ]
    if not any(settles(chain, windows, accounts, g) for g in combinations(chain.roles, 3)):
        return ["(b) no three roles settle the endpoint from their accounts"]
    pairs = [g for g in combinations(chain.roles, 2) if settles(chain, windows, accounts, g)]
    if pairs:
        return [f"(b) two roles ({' and '.join(pairs[0])}) already settle the endpoint"]
    return []


def check_windows(
    chain: Chain, windows: Mapping[str, Sequence[Window]], key: str, second_key: str
) -> list[str]:
    """Conditions (a)-(d) on the windows, and that every actor observes its own moves; (b) is
    checked last, once the others hold, since it enumerates walks."""
    problems = check_chain(chain)
    if problems:
        return problems
    m = chain.moves
    if set(windows) != set(chain.roles):
        return [f"windows are given for {sorted(windows)}, not for the roles {list(chain.roles)}"]
    for role, ws in windows.items():
        if not ws:
            problems.append(f"{role} has no window")
        if any(w.end > m for w in ws):
            problems.append(f"{role} has a window past the chain's {m} moves")
    for move in range(1, m + 1):
        if move not in observed_moves(windows[chain.actor(move)]):
            problems.append(f"{chain.actor(move)} does not observe a move it made")
    if problems:
        return problems
    whole = [r for r in chain.roles if covers(windows, [r], m)]
    if whole:
        problems.append(f"(a) {whole[0]} observes the whole chain")
    final = final_observers(windows, m)
    if len(final) != 2:
        problems.append(f"(d) {len(final)} roles observe the final move; exactly 2 must")
    elif set(final) != {key, second_key} or key == second_key:
        problems.append("(d) the key and second-key roles must be the two who see the final move")
    overlap = any(
        any(move in observed_moves(windows[r]) for r in chain.roles if r != chain.actor(move))
        for move in range(1, m + 1)
    )
    if not overlap:
        problems.append("(c) no move is observed by its actor and another role")
    if problems:
        return problems
    return check_sufficiency(chain, windows)


def rule_of(problem: str) -> str:
    """The rule (one of RULES) a problem of `check_windows` breaks, for counting rejections."""
    prefixes = {
        "the chain has": RULES[0],
        "the story has": RULES[1],
        "windows are given": RULES[2],
        "(a)": RULES[4],
        "(d)": RULES[5],
        "(c)": RULES[6],
        "(b) the honest": RULES[7],
        "(b) no three": RULES[8],
        "(b) two roles": RULES[9],
    }
    for prefix, rule in prefixes.items():
        if problem.startswith(prefix):
            return rule
    if problem.endswith("has no window") or "past the chain" in problem:
        return RULES[2]
    if problem.endswith("a move it made"):
        return RULES[3]
    if problem.startswith("the vote options lack"):
        return "the vote options lack a container of the chain"
    return problem


def position_words(text: str) -> str | None:
    """The first word or digit of `text` that could give a move's position, if any."""
    found = _POSITION.search(text)
    return None if found is None else found.group(0)


def check_messages(env: Environment) -> list[str]:
    problems = []
    senders = [m.sender for m in env.messages]
    if sorted(senders) != sorted(env.roles):
        problems.append("every role must send exactly one message")
    kinds = [m.kind for m in env.messages]
    if kinds.count("direct") != 2 or kinds.count("broadcast") != 3:
        problems.append("the messages must be two direct and three broadcast")
    for message in (*env.messages, env.false_message):
        if any(r not in env.roles for r in message.recipients):
            problems.append(f"{message.sender}'s message goes to someone outside the story")
        if message.kind == "broadcast" and set(message.recipients) != set(env.roles) - {
            message.sender
        }:
            problems.append(f"{message.sender}'s broadcast must go to every other role")
    for message in env.messages:
        seen = observed_nodes(env.windows[message.sender])
        if message.fabricated or not set(message.nodes) <= seen:
            problems.append(f"{message.sender}'s honest message reports what it did not see")
    false = env.false_message
    if false.sender != env.key:
        problems.append("the false message must be the key role's")
    if false.supports != env.chain.decoy or not false.fabricated:
        problems.append("the false message must make false claims pointing to the decoy")
    if (false.kind, false.recipients) != (env.key_message.kind, env.key_message.recipients):
        problems.append("the false message must go where the key role's honest message goes")
    if env.chain.decoy == env.chain.endpoint:
        problems.append("the decoy l(m-1) equals the true endpoint")
    if env.deception == "source":
        relay = env.slots.get("relay")
        report = next((m for m in env.messages if m.sender == relay), None)
        if env.key_kind != "direct":
            problems.append("source deception needs a direct key-role message")
        if report is None or report.kind != "direct" or report.recipients != (env.key,):
            problems.append("source deception needs a direct report to the key role")
        elif report.supports != env.chain.decoy:
            problems.append("source deception needs the key's direct report to be about l(m-1)")
    return problems


def check_texts(env: Environment) -> list[str]:
    """(a) no observation or message says which move of the chain it describes."""
    problems = []
    texts = [(f"{r}'s observations", t) for r, t in env.observations.items()]
    texts += [(f"{m.sender}'s message", m.text) for m in (*env.messages, env.false_message)]
    for where, text in texts:
        word = position_words(text)
        if word is not None:
            problems.append(f"(a) {where} gives a position ({word!r})")
    return problems


def verify(env: Environment) -> list[str]:
    """Every problem of an environment; an empty list means it is accepted."""
    problems = check_windows(env.chain, env.windows, env.key, env.second_key)
    if problems:
        return problems
    missing = [n.container for n in env.chain.nodes if n.container not in env.containers]
    if missing:
        problems.append(f"the vote options lack {missing[0]}, a container of the chain")
    if "UNKNOWN" in env.containers:
        problems.append("UNKNOWN cannot be a container name")
    return problems + check_messages(env) + check_texts(env)
