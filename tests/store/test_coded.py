"""Coded columns resolved as whole arrays: the same names and order as one lookup per row."""

from __future__ import annotations

import numpy as np
import pandas as pd

from backchannel.store._coded import Lookup, run_order, sort_order


def test_texts_name_each_code_and_give_na_for_an_unknown_one() -> None:
    names = Lookup({7: "judge", 2: "agent", 40: "kind"})
    texts = names.texts(np.array([2, 40, 3, 7, 99, -1]))
    assert texts.dtype == "str"
    assert texts.tolist()[:2] == ["agent", "kind"]
    assert texts.isna().tolist() == [False, False, True, False, True, True]
    assert texts[3] == "judge"


def test_categories_name_each_code_with_the_names_present_sorted_and_na_for_unknown() -> None:
    names = Lookup({7: "judge", 2: "agent", 40: "kind", 5: "unused"})
    found = names.categories(np.array([40, 2, 3, 7, 99, -1, 2, np.iinfo(np.int64).min]))
    assert isinstance(found.dtype, pd.CategoricalDtype)
    assert list(found.cat.categories) == ["agent", "judge", "kind"]  # "unused" occurs nowhere
    assert found.tolist()[:2] == ["kind", "agent"] and found[3] == "judge" and found[6] == "agent"
    assert found.isna().tolist() == [False, False, True, False, True, True, False, True]
    assert Lookup({}).categories(np.array([1, 2])).isna().all()


def test_text_order_sorts_codes_as_their_names_sort_with_na_last() -> None:
    names = Lookup({1: "zeta", 2: "alpha", 3: "mu"})
    assert names.text_order(np.array([1, 2, 3, 5])).tolist() == [2, 0, 1, 3]


def test_an_empty_lookup_knows_no_code() -> None:
    assert Lookup({}).texts(np.array([1, 2])).isna().all()


def _in_run_order(
    frame: pd.DataFrame,
    conversations: Lookup,
    rank: dict[int, int],
    keys: list[str],
    coded: dict[str, Lookup],
) -> pd.DataFrame:
    """`frame` (coded, with its `conv`) taken in `run_order`."""
    order, _ = run_order(
        frame["conv"].to_numpy(dtype=np.int64),
        conversations,
        rank,
        [frame[key].to_numpy(dtype=np.int64) for key in keys],
        [coded.get(key) for key in keys],
    )
    return (frame if order is None else frame.take(order)).reset_index(drop=True)


def test_run_order_matches_a_stable_pandas_sort_on_the_named_columns() -> None:
    rng = np.random.default_rng(3)
    convs = [30, 10, 20]  # run order differs from key order
    judges = {5: "b", 6: "a", 9: "c"}
    frame = pd.DataFrame(
        {
            "conv": rng.choice([10, 20, 30], 200),
            "seq": rng.integers(0, 6, 200),
            "judge": rng.choice([5, 6, 9], 200),
        }
    )
    ids = Lookup({10: "x", 20: "y", 30: "z"})
    rank = {conv: i for i, conv in enumerate(convs)}
    ordered = _in_run_order(frame, ids, rank, ["seq", "judge"], {"judge": Lookup(judges)})
    expected = (
        frame.assign(_rank=frame["conv"].map(rank), _judge=frame["judge"].map(judges))
        .sort_values(["_rank", "seq", "_judge"], kind="stable")
        .drop(columns=["_rank", "_judge"])
        .reset_index(drop=True)
    )
    pd.testing.assert_frame_equal(ordered, expected)


def test_run_order_puts_a_conversation_outside_the_scope_last() -> None:
    frame = pd.DataFrame({"conv": [4, 1, 2], "seq": [0, 0, 0]})
    ordered = _in_run_order(frame, Lookup({1: "a", 2: "b"}), {1: 1, 2: 0}, ["seq"], {})
    assert ordered["conv"].tolist() == [2, 1, 4]


def test_rows_already_in_order_keep_their_order() -> None:
    frame = pd.DataFrame({"conv": [1, 1, 2], "seq": [0, 1, 0]})
    ordered = _in_run_order(frame, Lookup({1: "a", 2: "b"}), {1: 0, 2: 1}, ["seq"], {})
    pd.testing.assert_frame_equal(ordered, frame)


def _searched(keys: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Places by a sorted search: how `Lookup.positions` found them before its table."""
    near = np.minimum(np.searchsorted(keys, wanted), len(keys) - 1)
    return np.where(keys[near] == wanted, near, len(keys))


def test_positions_by_table_and_by_search_agree_with_a_sorted_search() -> None:
    rng = np.random.default_rng(5)
    for span in (10, 5000, 1 << 40):  # small keys use the table, huge ones the search
        known = {int(k): f"n{k}" for k in rng.integers(0, span, 40)}
        lookup = Lookup(known)
        wanted = np.concatenate(
            [rng.integers(-3, span + 3, 500), [-(2**63), 2**63 - 1, 0, span]]
        ).astype(np.int64)
        assert lookup.positions(wanted).tolist() == _searched(lookup.keys, wanted).tolist()
        texts = lookup.texts(wanted)
        assert texts.isna().tolist() == [int(k) not in known for k in wanted]
        assert texts.dropna().tolist() == [known[int(k)] for k in wanted if int(k) in known]


def test_texts_at_a_key_of_nan_read_as_an_integer_is_na() -> None:
    lookup = Lookup({1: "a", 2: "b"})
    nan_code = np.array([np.iinfo(np.int64).min, 1])  # what a NULL read as float64 casts to
    assert lookup.texts(nan_code).isna().tolist() == [True, False]


def test_sort_order_is_lexsort_or_none_when_sorted() -> None:
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(0, 40))
        columns = [np.sort(rng.integers(0, 4, n)), rng.integers(0, 3, n), rng.integers(0, 3, n)]
        if rng.random() < 0.5:  # make it sorted, ties kept
            order = np.lexsort(columns[::-1])
            columns = [c[order] for c in columns]
        found = sort_order(columns)
        expected = np.lexsort(columns[::-1]) if n else np.arange(0)
        if found is None:
            assert expected.tolist() == list(range(n))
        else:
            assert found.tolist() == expected.tolist()
            assert expected.tolist() != list(range(n))
    assert sort_order([np.array([1, 1, 1]), np.array([0, 2, 1])]) is not None
    assert sort_order([np.array([0, 1, 1]), np.array([5, 1, 1])]) is None
