"""Walks the accounts allow, and the verifier's sufficiency rules judged from them, on chains
whose walks were listed by hand."""

from __future__ import annotations

from itertools import permutations

import pytest

from backchannel.paradigms.testimony import (
    Assignment,
    Chain,
    Fragment,
    Move,
    Node,
    Rejected,
    Walk,
    Window,
    accounts_of,
    assign_slots,
    build_environment,
    check_windows,
    endpoints,
    load_environments,
    verify,
    walks,
    windows_for,
)
from backchannel.paradigms.testimony._verify import RULES, rule_of

ROLES = ("Pat", "Quin", "Rae", "Xan", "Yul")


def chain(*containers: str, actors: tuple[str, ...] = ("Pat", "Quin", "Rae", "Xan")) -> Chain:
    nodes = [Node(containers[0])] + [
        Node(c, actors[i % len(actors)]) for i, c in enumerate(containers[1:])
    ]
    return Chain("t", "ball", tuple(nodes), ROLES)


def W(start: int, end: int) -> Window:
    return Window(start, end)


def ends_of(found: set[Walk]) -> list[str]:
    return sorted(w.end for w in found)


def test_a_cycle_under_the_plain_rule_allows_six_walks() -> None:
    # A -> B -> C -> A. Windows: Pat sees A->B, Quin and Xan B->C, Rae and Yul C->A. A walk
    # holds A->B exactly once (one window has it), B->C and C->A once or twice each (two
    # windows each, together or apart), in the cycle's order: before A->B comes nothing,
    # C->A, or B->C C->A; after it nothing, B->C, or B->C C->A, with at least one B->C and one
    # C->A in all. That leaves six walks, ending in A three times, in B once and in C twice.
    story = chain("A", "B", "C", "A")
    windows = {
        "Pat": (W(0, 1),),
        "Quin": (W(1, 2),),
        "Rae": (W(2, 3),),
        "Xan": (W(1, 2),),
        "Yul": (W(2, 3),),
    }
    found = walks(accounts_of(story, windows))
    assert len(found) == 6
    assert ends_of(found) == ["A", "A", "A", "B", "C", "C"]
    assert {w.start for w in found} == {"A", "B", "C"}
    assert endpoints(accounts_of(story, windows)) == {"A", "B", "C"}
    problems = check_windows(story, windows, "Yul", "Rae")
    assert problems == [
        "(b) the honest accounts do not settle the endpoint: the walks they allow end in the A, "
        "the B or the C"
    ]


def test_seeing_the_start_before_the_final_move_settles_the_cycle() -> None:
    # Yul also saw the ball in A before seeing C->A: every walk must show an A before Yul's
    # C->A. Of the six walks above, those ending in B or C put the only C->A Yul could take
    # before every A (B C A B, C A B C) or leave no C->A after Yul's A (B C A B C): three walks
    # remain, all ending in A.
    story = chain("A", "B", "C", "A")
    windows = {
        "Pat": (W(0, 1),),
        "Quin": (W(1, 2),),
        "Rae": (W(2, 3),),
        "Xan": (W(1, 2),),
        "Yul": (W(0, 0), W(2, 3)),
    }
    found = walks(accounts_of(story, windows))
    assert ends_of(found) == ["A", "A", "A"]
    assert Walk("A", (Move("Pat", "A", "B"), Move("Quin", "B", "C"), Move("Rae", "C", "A"))) in (
        found
    )
    # Pat, Quin and Yul see every move and settle it; no pair sees every move.
    assert check_windows(story, windows, "Yul", "Rae") == []


def test_fragments_that_cannot_be_joined_allow_no_walk() -> None:
    accounts = {
        "Pat": (Fragment("A", (Move("Pat", "A", "B"),)),),
        "Quin": (Fragment("C", (Move("Quin", "C", "D"),)),),
    }
    assert walks(accounts) == set()
    assert endpoints(accounts) == set()


def test_one_account_alone_is_no_walk_since_nobody_saw_every_move() -> None:
    assert walks({"Pat": (Fragment("A", (Move("Pat", "A", "B"),)),)}) == set()


def test_a_roles_windows_keep_their_order() -> None:
    # Pat saw A->B, then later C->D; Quin saw B->C and D->A... Quin's own order fixes where his
    # second window goes.
    accounts = {
        "Pat": (Fragment("A", (Move("x", "A", "B"),)), Fragment("C", (Move("y", "C", "D"),))),
        "Quin": (Fragment("B", (Move("z", "B", "C"),)),),
    }
    found = walks(accounts)
    assert [[m.after for m in w.moves] for w in found] == [["B", "C", "D"]]
    swapped = {**accounts, "Pat": tuple(reversed(accounts["Pat"]))}
    assert walks(swapped) == set()  # C->D before A->B cannot join B->C


def test_two_roles_that_settle_the_story_are_named() -> None:
    # A -> B -> C -> D with distinct containers: Xan saw A->B->C and Rae made C->D, so the two
    # see every move and join into one walk only.
    story = chain("A", "B", "C", "D")
    windows = {
        "Pat": (W(0, 1),),
        "Quin": (W(1, 2),),
        "Rae": (W(2, 3),),
        "Xan": (W(0, 2),),
        "Yul": (W(2, 3),),
    }
    assert check_windows(story, windows, "Yul", "Rae") == [
        "(b) two roles (Rae and Xan) already settle the endpoint"
    ]


def test_no_three_roles_settle_when_four_single_moves_are_needed() -> None:
    story = chain("A", "B", "C", "D", "E")
    windows = {
        "Pat": (W(0, 1),),
        "Quin": (W(1, 2),),
        "Rae": (W(2, 3),),
        "Xan": (W(3, 4),),
        "Yul": (W(3, 4),),
    }
    assert endpoints(accounts_of(story, windows)) == {"E"}
    assert check_windows(story, windows, "Yul", "Xan") == [
        "(b) no three roles settle the endpoint from their accounts"
    ]


CYCLES = [
    ("A", "B", "C", "A"),
    ("A", "B", "C", "D", "A"),
    ("A", "B", "A", "C", "A"),
    ("A", "B", "C", "B", "A"),
    ("A", "B", "A", "B"),
]


@pytest.mark.parametrize("containers", CYCLES, ids=["".join(c) for c in CYCLES])
def test_cyclic_ambiguous_chains_are_rejected_with_their_reason(
    containers: tuple[str, ...],
) -> None:
    # Chains that end where they start, or whose end repeats an earlier container: under the
    # plain window rule every slot assignment is rejected, nearly always because the honest
    # accounts leave more than one endpoint open, and the story is rejected with that reason.
    story = chain(*containers)
    mover = story.actor(story.moves)
    others = [r for r in ROLES if r != mover]
    reasons = []
    for order in permutations(others):
        slots = dict(zip(("early", "middle", "witness", "relay"), order, strict=True))
        slots["mover"] = mover
        windows = windows_for(story, slots)
        problems = check_windows(story, windows, slots["witness"], mover)
        assert problems, slots
        reasons.append(rule_of(problems[0]))
        if reasons[-1] == RULES[7]:
            ends = endpoints(accounts_of(story, windows))
            assert len(ends) > 1 and story.endpoint in ends
            with pytest.raises(Rejected, match="do not settle the endpoint: the walks they"):
                build_environment(
                    story,
                    tuple(sorted(set(containers))),
                    deception="event",
                    key_kind="direct",
                    environment_id="cycle",
                    assignment=Assignment(slots, windows),
                )
    assert reasons.count(RULES[7]) >= 23
    assert set(reasons) <= {RULES[7], RULES[9]}
    with pytest.raises(Rejected, match=r"^t: \(b\)"):
        assign_slots(story)


def test_every_shipped_environment_settles_from_its_texts() -> None:
    for env in load_environments():
        assert verify(env) == [], env.id
        assert endpoints(accounts_of(env.chain, env.windows)) == {env.chain.endpoint}
