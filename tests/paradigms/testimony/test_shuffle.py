"""No time cue: the seeded orders of roles and vote options, across the shipped stories."""

from __future__ import annotations

from scipy.stats import kendalltau, spearmanr

from backchannel.paradigms.testimony import load_environments
from backchannel.paradigms.testimony._shuffle import story_order

SEED = 2026  # the seed of the shipped example experiments


def positions_and_starts(ordered: bool) -> tuple[list[int], list[float]]:
    """Each message's position in what agents read, and where its sender's window starts (the
    share of the chain before it), over every shipped story."""
    positions: list[int] = []
    starts: list[float] = []
    for env in load_environments():
        roles = story_order(env.roles, SEED, env.id, "roles") if ordered else list(env.roles)
        for position, role in enumerate(roles):
            positions.append(position)
            starts.append(env.windows[role][0].start / env.chain.moves)
    return positions, starts


def test_message_position_does_not_follow_the_story() -> None:
    positions, starts = positions_and_starts(ordered=True)
    assert len(positions) == 600
    assert abs(spearmanr(positions, starts).statistic) < 0.1
    assert abs(kendalltau(positions, starts).statistic) < 0.1


def test_the_hi_tom_roster_would_give_the_time_away() -> None:
    # The same measure on the roster order (people in the order they act) is far from zero:
    # the test above can fail.
    positions, starts = positions_and_starts(ordered=False)
    assert spearmanr(positions, starts).statistic > 0.3


def test_the_final_mover_and_the_first_role_land_anywhere() -> None:
    environments = load_environments()
    last = sum(story_order(e.roles, SEED, e.id, "roles")[-1] == e.second_key for e in environments)
    first = sum(
        story_order(e.roles, SEED, e.id, "roles")[0] == e.slots["early"] for e in environments
    )
    # About a fifth each (24 of 120 expected); the roster put the final mover last in most.
    assert 10 <= last <= 40 and 10 <= first <= 40
    assert sum(e.roles[-1] == e.second_key for e in environments) > 40


def test_the_order_depends_on_the_story_and_seed_only() -> None:
    env = load_environments()[0]
    once = story_order(env.roles, SEED, env.id, "roles")
    assert once == story_order(env.roles, SEED, env.id, "roles")
    assert sorted(once) == sorted(env.roles)
    others = {tuple(story_order(env.roles, seed, env.id, "roles")) for seed in range(20)}
    assert len(others) > 5
    options = story_order(env.containers, SEED, env.id, "options")
    assert sorted(options) == sorted(env.containers) and options != list(env.containers)
