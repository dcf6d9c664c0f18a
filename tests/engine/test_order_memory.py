"""Speaking order and memory views, on hand-built transcripts."""

from __future__ import annotations

import pytest

from backchannel.engine import Entry, render_view, speaking_order, visible_entries

SEATS = ["A", "B", "C", "D", "E"]


def test_fixed_order_is_the_seat_order_in_every_round() -> None:
    for round_number in (1, 2, 7):
        assert speaking_order(SEATS, round_number, "fixed", experiment_seed=3) == SEATS


def test_shuffled_order_depends_only_on_experiment_seed_and_round() -> None:
    first = [speaking_order(SEATS, r, "shuffled", experiment_seed=3) for r in range(1, 9)]
    again = [speaking_order(SEATS, r, "shuffled", experiment_seed=3) for r in range(1, 9)]
    assert first == again
    for order in first:
        assert sorted(order) == SEATS
    # 5! = 120 orders: eight rounds all drawing the same one would have probability 120**-7.
    assert len({tuple(order) for order in first}) > 1
    other_seed = [speaking_order(SEATS, r, "shuffled", experiment_seed=4) for r in range(1, 9)]
    assert other_seed != first


def test_unknown_order_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="fixed or shuffled"):
        speaking_order(SEATS, 1, "random", 0)


# A transcript of three agents over four rounds (plus the opening), one message each per round.
TRANSCRIPT = [Entry(0, 0, "Moderator", "Welcome.")] + [
    Entry(r, t, name, f"{name} r{r}") for r in range(1, 5) for t, name in enumerate("ABC")
]


def test_window_keeps_the_last_h_completed_rounds_and_always_the_opening() -> None:
    # H = 2 after round 4 (a probe at checkpoint 4): rounds 3 and 4, oldest = 4-2+1 = 3.
    shown = visible_entries(TRANSCRIPT, "A", completed_rounds=4, memory_rounds=2)
    assert [(e.round, e.speaker) for e in shown] == [
        (0, "Moderator"),
        (3, "A"),
        (3, "B"),
        (3, "C"),
        (4, "A"),
        (4, "B"),
        (4, "C"),
    ]
    # H = 1, B speaking in round 3 (2 rounds completed; A has spoken in round 3): round 2 in
    # full plus round 3 so far; round 1 is gone.
    so_far = [e for e in TRANSCRIPT if e.round <= 2] + [Entry(3, 0, "A", "A r3")]
    shown = visible_entries(so_far, "B", completed_rounds=2, memory_rounds=1)
    assert [e.text for e in shown] == ["Welcome.", "A r2", "B r2", "C r2", "A r3"]
    # No window: everything.
    assert len(visible_entries(TRANSCRIPT, "C", completed_rounds=4, memory_rounds=None)) == 13


def test_own_messages_render_as_you_and_others_by_name() -> None:
    entries = [
        Entry(0, 0, "Moderator", "Welcome."),
        Entry(1, 0, "A", " hi "),
        Entry(1, 1, "B", "yo"),
    ]
    assert render_view(entries, "A") == "Moderator: Welcome.\n\nYou: hi\n\nB: yo"
    assert render_view(entries, "B") == "Moderator: Welcome.\n\nA: hi\n\nYou: yo"
    assert render_view(entries, "A", self_name="Participant X") == (
        "Moderator: Welcome.\n\nParticipant X: hi\n\nB: yo"
    )


def test_direct_message_is_seen_only_by_its_recipients_and_sender() -> None:
    whisper = Entry(1, 0, "A", "secret", recipients=frozenset({"B"}))
    transcript = [Entry(0, 0, "Moderator", "Welcome."), whisper, Entry(1, 1, "B", "public")]
    seen = {
        viewer: [e.text for e in visible_entries(transcript, viewer, 1, None)]
        for viewer in ("A", "B", "C")
    }
    assert seen == {
        "A": ["Welcome.", "secret", "public"],
        "B": ["Welcome.", "secret", "public"],
        "C": ["Welcome.", "public"],
    }
