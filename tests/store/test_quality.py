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


def _random_events(seed: int, rows: int) -> pd.DataFrame:
    import numpy as np

    rng = np.random.default_rng(seed)
    models = np.array(["m", "", None, "other"], dtype=object)
    statuses = np.array(["ok", "parse_failure", "refusal", "error", "timeout", None], dtype=object)
    texts = np.array(["yes", "", " ", "\t\n", "\u00a0", " no ", None, "\r"], dtype=object)
    return pd.DataFrame(
        {
            "model": models[rng.integers(0, len(models), rows)],
            "status": statuses[rng.integers(0, len(statuses), rows)],
            "text": texts[rng.integers(0, len(texts), rows)],
        }
    )


def test_arrow_text_and_other_dtypes_count_alike() -> None:
    # Text columns are counted with Arrow's kernels, others through pandas: the same counts,
    # with missing values, whitespace that is not blank (a no-break space) and unknown statuses.
    from backchannel.store._quality import _counted_by_pandas

    for seed in range(20):
        as_objects = _random_events(seed, 200).astype(object)
        as_text = as_objects.astype(pd.StringDtype(na_value=float("nan")))
        assert all(isinstance(as_text[c].dtype, pd.StringDtype) for c in as_text)
        expected = _counted_by_pandas(as_objects)
        assert answer_quality(as_text) == expected
        assert answer_quality(as_objects) == expected
        # The store's frames hold `model` and `status` as categoricals (codes of the texts).
        as_codes = as_text.assign(
            model=as_text["model"].astype("category"), status=as_text["status"].astype("category")
        )
        assert answer_quality(as_codes) == expected


def test_arrow_counts_by_hand() -> None:
    events = pd.DataFrame(
        {
            "model": ["m", "m", None, "m", "m", "m"],
            "status": ["ok", "parse_failure", "ok", "parse_failure", None, "refusal"],
            "text": ["\u00a0", None, "", "x", "", " "],
        },
        dtype=pd.StringDtype(na_value=float("nan")),
    )
    # answered 5 (no model in the third row); empty: the parse failure without text (the
    # no-break space is text); unreadable: the parse failure with "x"; one refusal.
    assert answer_quality(events) == {
        "answers": 5,
        "empty": 1,
        "unreadable": 1,
        "refused": 1,
        "errors": 0,
    }
