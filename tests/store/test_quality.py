"""Answer counts of an events table, worked out by hand."""

from __future__ import annotations

import pandas as pd

from backchannel.store import answer_quality


def test_counts_by_hand_on_an_index_that_is_not_the_rows_places() -> None:
    events = pd.DataFrame(
        {
            "model": ["m", "m", None, "", "m", "m", "m", "m"],
            "status": [
                "ok",
                "ok",
                "ok",
                "ok",
                "parse_failure",
                "parse_failure",
                "refusal",
                "error",
            ],
            "text": ["yes", " \n", "", "", "", "garbled", None, "x"],
        },
        index=[9, 3, 5, 1, 0, 7, 2, 8],
    )
    # answered: every row with a model (6); empty: ok or parse_failure with blank text (rows 2
    # and 5); unreadable: parse_failure with text (1); one refusal, one error.
    assert answer_quality(events) == {
        "answers": 6,
        "empty": 2,
        "unreadable": 1,
        "refused": 1,
        "errors": 1,
    }


def test_no_events_no_answers() -> None:
    empty = pd.DataFrame(columns=["model", "status", "text"])
    assert answer_quality(empty)["answers"] == 0
