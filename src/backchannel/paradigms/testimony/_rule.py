"""From a chain to a verified environment: windows, key roles, observations and testimony.

The message rule: the relay sends its account as a direct message to the key role; when the key
role's message is direct it goes to the early role, and the early, middle and mover roles
broadcast; when it is a broadcast, the early role writes directly to the middle role and the
key, middle and mover roles broadcast. So there are always two direct messages and three
broadcasts, all after the last move, each the sender's own account.

Slots go to roles in the first roster permutation the verifier accepts. With `adapt`, a story
no permutation passes may take an adapted assignment: one role also gets a window in which it
saw where the object was without seeing it move (a zero-move window [t, t]), tried for the
witness, relay, early, middle and mover slot in that order and t = 0..m-1, per permutation.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

from backchannel.paradigms.testimony._accounts import account, false_tail, window_sentences
from backchannel.paradigms.testimony._chain import Chain
from backchannel.paradigms.testimony._environment import (
    Deception,
    Environment,
    MessageKind,
    WitnessMessage,
)
from backchannel.paradigms.testimony._verify import (
    RULES,
    check_chain,
    check_windows,
    rule_of,
    verify,
)
from backchannel.paradigms.testimony._windows import Window, merge, observed_nodes, windows_for

ADAPTED_SLOTS = ("witness", "relay", "early", "middle", "mover")


class Rejected(ValueError):
    """A story the rule cannot turn into an environment that passes the verifier."""

    def __init__(self, story_id: str, problems: list[str]) -> None:
        super().__init__(f"{story_id}: {problems[0]}")
        self.story_id = story_id
        self.problems = problems


@dataclass(frozen=True, slots=True)
class Assignment:
    """Which role takes which slot, every role's windows, and the adaptation made (if any)."""

    slots: dict[str, str]
    windows: dict[str, tuple[Window, ...]]
    adaptation: str | None = None


def _furthest(found: list[str], problems: list[str]) -> list[str]:
    """Of two failed assignments, the one that got further through the verifier's rules."""
    if not found:
        return problems
    return problems if RULES.index(rule_of(problems[0])) > RULES.index(rule_of(found[0])) else found


def assign_windows(chain: Chain, *, adapt: bool = False) -> Assignment:
    """The first assignment (roster permutations in order, then, with `adapt`, the adapted ones)
    whose windows pass the verifier; Rejected names the furthest rule any of them reached."""
    problems = check_chain(chain)
    if problems:
        raise Rejected(chain.story_id, problems)
    mover = chain.actor(chain.moves)
    others = [r for r in chain.roles if r != mover]
    orders = []
    for order in permutations(others):
        slots = dict(zip(("early", "middle", "witness", "relay"), order, strict=True))
        slots["mover"] = mover
        orders.append(slots)
    furthest: list[str] = []
    for slots in orders:
        windows = windows_for(chain, slots)
        problems = check_windows(chain, windows, slots["witness"], mover)
        if not problems:
            return Assignment(slots, windows)
        furthest = _furthest(furthest, problems)
    if adapt:
        for slots in orders:
            plain = windows_for(chain, slots)
            for slot in ADAPTED_SLOTS:
                role = slots[slot]
                for node in range(chain.moves):
                    extra = {role: (Window(node, node),)}
                    if merge([*plain[role], *extra[role]]) == plain[role]:
                        continue  # the role was there anyway
                    windows = windows_for(chain, slots, extra)
                    if not check_windows(chain, windows, slots["witness"], mover):
                        place = chain.nodes[node].container
                        return Assignment(
                            slots,
                            windows,
                            f"adapted windows: {role} ({slot}) also saw the {chain.target} in "
                            f"the {place} without seeing it move",
                        )
    raise Rejected(chain.story_id, furthest or ["no slot assignment"])


def assign_slots(chain: Chain) -> tuple[dict[str, str], dict[str, tuple[Window, ...]]]:
    """The first slot assignment (roster permutations in order) whose windows pass (a)-(d)."""
    found = assign_windows(chain)
    return found.slots, found.windows


def _testimony(
    chain: Chain,
    sender: str,
    windows: tuple[Window, ...],
    kind: MessageKind,
    recipients: tuple[str, ...],
) -> WitnessMessage:
    return WitnessMessage(
        sender=sender,
        kind=kind,
        recipients=recipients,
        text=account(chain, sender, windows, "i"),
        nodes=tuple(sorted(observed_nodes(windows))),
        supports=chain.nodes[windows[-1].end].container,
    )


def _false_message(
    chain: Chain,
    key: str,
    windows: tuple[Window, ...],
    deception: Deception,
    honest: WitnessMessage,
    slots: dict[str, str],
) -> WitnessMessage:
    """The key role's C1 message: its true account up to the window over the final move, then
    the false account of that window."""
    sentences: list[str] = []
    kept: list[Window] = []
    for index, window in enumerate(windows):
        if chain.moves in window.moves:
            # The part of this window before l(m-1) stays true; the rest is the false tail.
            if window.start < chain.moves - 1:
                head = Window(window.start, chain.moves - 1)
                sentences.extend(window_sentences(chain, key, head, "i", later=index > 0)[:-1])
                kept.append(head)
                tail = false_tail(chain, deception, slots["mover"], slots["relay"])[1:]
            else:
                tail = false_tail(chain, deception, slots["mover"], slots["relay"])
                if index > 0:
                    tail[0] = tail[0].replace("I entered", "Later I came back", 1)
            sentences.extend(tail)
            break
        sentences.extend(window_sentences(chain, key, window, "i", later=index > 0))
        kept.append(window)
    fabricated = {
        "event": f"a move of the {chain.target} back to the {chain.decoy} after the final move",
        "coverage": f"a window past the final move, with the {chain.decoy} after the "
        f"{chain.endpoint}",
        "source": f"{slots['relay']}'s older report on the {chain.decoy} as received after "
        "the final move",
    }[deception]
    return WitnessMessage(
        sender=key,
        kind=honest.kind,
        recipients=honest.recipients,
        text=" ".join(sentences),
        # Every state it names is true except the fabricated claims: it still reports l(m-1)
        # and the final move, then bends what came after.
        nodes=tuple(sorted(observed_nodes(kept) | {chain.moves - 1, chain.moves})),
        supports=chain.decoy,
        fabricated=(fabricated,),
    )


def build_environment(
    chain: Chain,
    containers: tuple[str, ...],
    *,
    deception: Deception,
    key_kind: MessageKind,
    environment_id: str,
    source: str = "hitom",
    adapt: bool = False,
    adaptations: tuple[str, ...] = (),
    assignment: Assignment | None = None,
) -> Environment:
    """Apply the window and message rules to a chain; raise Rejected naming what fails.

    `adapt` allows an adapted window assignment; `adaptations` lists earlier adaptations of the
    story (an added move), recorded with the environment; `assignment` reuses one already made.
    """
    if deception == "source" and key_kind != "direct":
        raise Rejected(chain.story_id, ["source deception needs a direct key-role message"])
    found = assignment or assign_windows(chain, adapt=adapt)
    slots, windows = found.slots, found.windows
    if found.adaptation is not None:
        adaptations = (*adaptations, found.adaptation)
    key, second_key = slots["witness"], slots["mover"]
    everyone = set(chain.roles)

    def to_all(sender: str) -> tuple[str, ...]:
        return tuple(r for r in chain.roles if r in everyone - {sender})

    plan: dict[str, tuple[MessageKind, tuple[str, ...]]] = {
        slots["relay"]: ("direct", (key,)),
        slots["middle"]: ("broadcast", to_all(slots["middle"])),
        slots["mover"]: ("broadcast", to_all(slots["mover"])),
    }
    if key_kind == "direct":
        plan[key] = ("direct", (slots["early"],))
        plan[slots["early"]] = ("broadcast", to_all(slots["early"]))
    else:
        plan[key] = ("broadcast", to_all(key))
        plan[slots["early"]] = ("direct", (slots["middle"],))
    messages = tuple(_testimony(chain, role, windows[role], *plan[role]) for role in chain.roles)
    honest_key = next(m for m in messages if m.sender == key)
    env = Environment(
        id=environment_id,
        source=source,
        chain=chain,
        containers=containers,
        slots=slots,
        windows=windows,
        key=key,
        second_key=second_key,
        observations={r: account(chain, r, windows[r], "you") for r in chain.roles},
        messages=messages,
        deception=deception,
        false_message=_false_message(chain, key, windows[key], deception, honest_key, slots),
        adaptations=adaptations,
    )
    problems = verify(env)
    if problems:
        raise Rejected(chain.story_id, problems)
    return env
