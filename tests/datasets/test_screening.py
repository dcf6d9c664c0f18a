from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from backchannel.datasets import FactItem, ScreeningResult
from backchannel.datasets import screen_items as screen_labels
from backchannel.judges import classify_answers


def screen_items(
    items: list[FactItem], answers: dict[str, list[str]], **options: Any
) -> ScreeningResult:
    """Screening on raw answers, each labelled by the rule judge as `backchannel screen` does."""
    return screen_labels(items, classify_answers(items, answers), **options)


def _item(paris: FactItem, item_id: str, relation: str = "capital") -> FactItem:
    return dataclasses.replace(paris, item_id=item_id, relation=relation)


def test_thresholds_and_relation_cap(paris: FactItem) -> None:
    items = [
        _item(paris, "a"),
        _item(paris, "b"),
        _item(paris, "c"),
        _item(paris, "d"),
        _item(paris, "e"),
        _item(paris, "f", relation="river"),
        _item(paris, "g"),
    ]
    ten_true = ["Paris"] * 10
    answers = {
        # a: 10/10 true -> correct 1.0, false 0, both 0: passes
        "a": ten_true,
        # b: 9 true + 1 "not Paris" (uncertain) -> correct 0.9: passes
        "b": ["Paris"] * 9 + ["It is not Paris"],
        # c: 8 true + 1 Lyon + 1 unsure -> correct 0.8 (passes), false 0.1 > 0.05: excluded
        "c": ["Paris"] * 8 + ["Lyon", "I don't know"],
        # d: 8 true + 2 "Paris or Lyon" -> correct 0.8, both 0.2 > 0.10, and naming Lyon
        #    (false) 0.2 > 0.05: excluded for both reasons
        "d": ["Paris"] * 8 + ["Paris or Lyon"] * 2,
        # e: 7 true + 3 uncertain -> correct 0.7 < 0.8: excluded
        "e": ["Paris"] * 7 + ["no idea"] * 3,
        # f: 10/10 true in another relation: passes
        "f": ten_true,
        # g: no answers at all
    }
    result = screen_items(items, answers)
    rates = result.rates.set_index("item_id")
    assert [i.item_id for i in result.items] == ["a", "b", "f"]
    assert rates.loc["b", "correct"] == pytest.approx(0.9)
    assert rates.loc["c", "false"] == pytest.approx(0.1)
    assert rates.loc["d", "both"] == pytest.approx(0.2)
    assert rates.loc["c", "reason"] == "false > 0.05"
    assert rates.loc["d", "false"] == pytest.approx(0.2)
    assert rates.loc["d", "reason"] == "false > 0.05; both > 0.1"
    assert rates.loc["e", "reason"] == "correct < 0.8"
    assert rates.loc["g", "reason"] == "no answers" and math.isnan(rates.loc["g", "correct"])
    assert rates.loc["g", "n"] == 0

    # cap 1 per relation: among capital items a (1.0) and b (0.9) only a stays; f is alone
    capped = screen_items(items, answers, per_relation_cap=1)
    assert [i.item_id for i in capped.items] == ["a", "f"]
    assert capped.rates.set_index("item_id").loc["b", "reason"] == "relation cap 1"

    # equal rates break ties by item id: with b's answers perfect too, a is kept before b
    tied = screen_items(items, {**answers, "b": ten_true}, per_relation_cap=1)
    assert [i.item_id for i in tied.items] == ["a", "f"]
    assert list(tied.rates["kept"]) == [True, False, False, False, False, True, False]


def test_looser_thresholds_keep_more(paris: FactItem) -> None:
    items = [_item(paris, "c")]
    answers = {"c": ["Paris"] * 8 + ["Lyon", "I don't know"]}
    assert screen_items(items, answers, max_false=0.1).items == (items[0],)


@pytest.mark.parametrize(
    "kwargs", [{"min_correct": 1.5}, {"max_false": -0.1}, {"per_relation_cap": 0}]
)
def test_bad_parameters(paris: FactItem, kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        screen_items([paris], {}, **kwargs)  # type: ignore[arg-type]


def test_a_mixed_answer_names_the_false_answer(paris: FactItem) -> None:
    # 19 true + 1 "Paris or Lyon" of 20: correct 0.95, both 0.05 (within 0.10), but the false
    # answer Lyon is named in 1/20 = 0.05 (allowed); with 2 mixed of 20 it is named in
    # 2/20 = 0.10 > 0.05 although no answer is purely false: excluded.
    one = ["Paris"] * 19 + ["Paris or Lyon"]
    two = ["Paris"] * 18 + ["Paris or Lyon"] * 2
    result = screen_items([_item(paris, "one"), _item(paris, "two")], {"one": one, "two": two})
    rates = result.rates.set_index("item_id")
    assert [i.item_id for i in result.items] == ["one"]
    assert rates.loc["one", "false"] == pytest.approx(0.05)
    assert rates.loc["two", "false"] == pytest.approx(0.10)
    assert rates.loc["two", "both"] == pytest.approx(0.10)
    assert rates.loc["two", "reason"] == "false > 0.05"
