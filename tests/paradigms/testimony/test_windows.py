"""The window rule, the message rule and the verifier, on Hi-ToM stories and hand-made cases."""

from __future__ import annotations

from dataclasses import replace

import pytest

from backchannel.paradigms.testimony import (
    Rejected,
    Window,
    assign_slots,
    assign_windows,
    build_environment,
    check_windows,
    extract_chain,
    merge,
    spans,
    verify,
)
from backchannel.paradigms.testimony._hitom import parse_choices

from ._stories import EGGPLANT, EGGPLANT_CHOICES, LETTUCE, LETTUCE_CHOICES, ONION, PEAS


def W(start: int, end: int) -> Window:
    return Window(start, end)


def lettuce(deception: str = "event", kind: str = "direct"):  # type: ignore[no-untyped-def]
    return build_environment(
        extract_chain(LETTUCE, "hitom-0000"),
        parse_choices(LETTUCE_CHOICES),
        deception=deception,  # type: ignore[arg-type]
        key_kind=kind,  # type: ignore[arg-type]
        environment_id="hitom-0000-" + deception,
        adapt=True,
    )


@pytest.mark.parametrize(
    ("moves", "expected"),
    [
        (
            3,
            {
                "early": (0, 1),
                "middle": (1, 2),
                "mover": (2, 3),
                "witness": (2, 3),
                "relay": (1, 2),
            },
        ),
        (
            4,
            {
                "early": (0, 1),
                "middle": (1, 3),
                "mover": (3, 4),
                "witness": (3, 4),
                "relay": (2, 3),
            },
        ),
        (
            5,
            {
                "early": (0, 2),
                "middle": (2, 3),
                "mover": (3, 5),
                "witness": (4, 5),
                "relay": (3, 4),
            },
        ),
        (
            7,
            {
                "early": (0, 2),
                "middle": (2, 5),
                "mover": (5, 7),
                "witness": (6, 7),
                "relay": (5, 6),
            },
        ),
    ],
)
def test_spans_follow_the_documented_rule(moves: int, expected: dict) -> None:
    assert {k: (w.start, w.end) for k, w in spans(moves).items()} == expected


def test_windows_that_touch_merge_and_gaps_stay_apart() -> None:
    assert merge([W(1, 2), W(0, 1), W(3, 4)]) == (W(0, 2), W(3, 4))
    with pytest.raises(ValueError):
        Window(2, 1)


def test_lettuce_windows_and_key_roles() -> None:
    env = lettuce()
    assert env.slots == {
        "early": "Avery",
        "middle": "Charlotte",
        "witness": "Isabella",
        "relay": "Elizabeth",
        "mover": "Owen",
    }
    # The lettuce returns to where it started: the plain rule leaves the endpoint open, so the
    # adapted assignment lets the key also see the lettuce in the green_drawer before it moved.
    assert env.windows == {
        "Avery": (W(0, 1),),
        "Charlotte": (W(1, 2),),
        "Isabella": (W(0, 0), W(2, 3)),
        "Elizabeth": (W(1, 2),),
        "Owen": (W(2, 3),),
    }
    assert env.adaptations == (
        "adapted windows: Isabella (witness) also saw the lettuce in the green_drawer without "
        "seeing it move",
    )
    assert (env.key, env.second_key) == ("Isabella", "Owen")
    assert verify(env) == []


def test_reentry_gives_two_windows_and_actors_see_their_own_moves() -> None:
    chain = extract_chain(EGGPLANT, "hitom-0002")
    found = assign_windows(chain, adapt=True)
    # Hannah witnesses the final move [3, 4], made move 2 herself and, adapted, saw the
    # eggplant in the green_envelope before anyone moved it: three windows.
    assert found.slots["witness"] == "Hannah"
    assert found.windows["Hannah"] == (W(0, 0), W(1, 2), W(3, 4))
    # Liam's middle span [1, 3] and Owen's own move [2, 3] as the relay.
    assert found.windows["Liam"] == (W(1, 3),) and found.windows["Owen"] == (W(2, 3),)


def test_observations_never_give_a_position() -> None:
    env = lettuce()
    assert env.observations["Isabella"] == (
        "You entered while the lettuce was in the green_drawer. When you left, the lettuce was "
        "in the green_drawer. Later you came back while the lettuce was in the blue_pantry. You "
        "saw Owen move the lettuce from the blue_pantry to the green_drawer. When you left, the "
        "lettuce was in the green_drawer."
    )
    assert env.observations["Avery"].startswith("You entered while the lettuce was in the green")
    bad = replace(env, observations={**env.observations, "Avery": "Your 1st move ..."})
    assert any("gives a position" in p for p in verify(bad))
    bad = replace(env, observations={**env.observations, "Avery": "At the final move ..."})
    assert any("'final'" in p for p in verify(bad))


@pytest.mark.parametrize("kind", ["direct", "broadcast"])
def test_message_rule_two_direct_three_broadcast(kind: str) -> None:
    env = lettuce(kind=kind)
    kinds = {m.sender: (m.kind, m.recipients) for m in env.messages}
    assert kinds["Elizabeth"] == ("direct", ("Isabella",))  # the relay reports to the key
    assert kinds["Owen"][0] == "broadcast"  # the second key broadcasts
    if kind == "direct":
        assert kinds["Isabella"] == ("direct", ("Avery",))
    else:
        assert kinds["Isabella"][0] == "broadcast"
        assert kinds["Avery"] == ("direct", ("Charlotte",))
    assert sorted(k for k, _ in kinds.values()) == ["broadcast"] * 3 + ["direct"] * 2


def test_false_messages_point_to_the_decoy() -> None:
    event, coverage, source = (lettuce(d) for d in ("event", "coverage", "source"))
    assert "I moved the lettuce from the green_drawer back to the blue_pantry" in (
        event.false_message.text
    )
    assert "later I saw the lettuce in the blue_pantry again" in coverage.false_message.text
    assert "Elizabeth told me privately that the lettuce is in the blue_pantry" in (
        source.false_message.text
    )
    for env in (event, coverage, source):
        assert env.false_message.supports == "blue_pantry" != env.chain.endpoint
        assert env.false_message.recipients == env.key_message.recipients
        assert env.messages_for("C1")[2] == env.false_message  # Isabella's slot in the roster
        assert env.messages_for("C0") == env.messages


def test_source_needs_a_direct_key_message() -> None:
    with pytest.raises(Rejected, match="direct"):
        lettuce("source", "broadcast")


def test_stories_the_verifier_rejects() -> None:
    with pytest.raises(Rejected, match="2 moves; at least 3"):
        assign_slots(extract_chain(PEAS, "hitom-0800"))
    # Owen makes two of the onion's three moves: with the first role's account the two settle
    # it, however the slots and windows are assigned.
    with pytest.raises(Rejected, match=r"\(b\) two roles \(Emily and Owen\) already settle"):
        assign_windows(extract_chain(ONION, "hitom-0201"), adapt=True)
    # The lettuce returns to where it started; the plain rule cannot settle its endpoint.
    with pytest.raises(Rejected, match=r"\(b\) the honest accounts do not settle the endpoint"):
        assign_slots(extract_chain(LETTUCE, "hitom-0000"))


def test_verifier_names_each_broken_condition() -> None:
    chain = extract_chain(LETTUCE, "s")
    good = {
        "Avery": (W(0, 1),),
        "Charlotte": (W(1, 2),),
        "Isabella": (W(0, 0), W(2, 3)),
        "Elizabeth": (W(1, 2),),
        "Owen": (W(2, 3),),
    }
    assert check_windows(chain, good, "Isabella", "Owen") == []

    def problems(**changes: tuple[Window, ...]) -> str:
        return " | ".join(check_windows(chain, {**good, **changes}, "Isabella", "Owen"))

    assert "(a) Elizabeth observes the whole chain" in problems(Elizabeth=(W(0, 3),))
    assert "(d) 3 roles observe the final move" in problems(Elizabeth=(W(1, 3),))
    assert "(d) the key and second-key" in " ".join(check_windows(chain, good, "Avery", "Owen"))
    assert "does not observe a move it made" in problems(Charlotte=(W(2, 2),))
    # Without Isabella's look at the start, the cycle lets the walks end anywhere on it.
    assert problems(Isabella=(W(2, 3),)) == (
        "(b) the honest accounts do not settle the endpoint: the walks they allow end in the "
        "blue_pantry, the green_bathtub or the green_drawer"
    )
    # (c): with the final move seen by its actor alone there is no overlap anywhere.
    no_overlap = {**good, "Elizabeth": (W(0, 0),), "Isabella": (W(0, 0),)}
    assert "(c) no move is observed by its actor and another role" in " ".join(
        check_windows(chain, no_overlap, "Isabella", "Owen")
    )


def test_verifier_checks_messages() -> None:
    env = lettuce()
    avery = env.message_of("Avery")
    lying = replace(avery, nodes=(0, 1, 2, 3))
    broken = replace(env, messages=tuple(lying if m is avery else m for m in env.messages))
    assert any("reports what it did not see" in p for p in verify(broken))
    direct = replace(avery, kind="direct", recipients=("Owen",))
    three = replace(env, messages=tuple(direct if m is avery else m for m in env.messages))
    assert any("two direct and three broadcast" in p for p in verify(three))
    truthful = replace(env.false_message, fabricated=())
    assert any("false claims" in p for p in verify(replace(env, false_message=truthful)))
    assert any("lack green_drawer" in p for p in verify(replace(env, containers=("x", "y"))))


def test_every_eggplant_type_builds() -> None:
    chain = extract_chain(EGGPLANT, "hitom-0002")
    for deception in ("event", "coverage", "source"):
        env = build_environment(
            chain,
            parse_choices(EGGPLANT_CHOICES),
            deception=deception,  # type: ignore[arg-type]
            key_kind="direct",
            environment_id="e",
            adapt=True,
        )
        assert verify(env) == []
        # Hannah's true account of her earlier windows and of the final move stays; only what
        # follows the final move is false.
        honest = env.key_message.text
        assert env.key == "Hannah" and honest.endswith(
            "I saw Noah move the eggplant from the green_basket to the green_envelope. When I "
            "left, the eggplant was in the green_envelope."
        )
        kept = honest.removesuffix(" When I left, the eggplant was in the green_envelope.")
        assert env.false_message.text.startswith(kept)
